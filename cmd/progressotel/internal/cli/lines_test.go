package cli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
)

// TestLineRecorderSplitsLines: the output passes through byte for byte
// whatever the sizes of the writes, and each line is one event: a line
// split across writes is whole, CR LF ends a line, a line longer than
// maxLine is recorded in parts of maxLine bytes, and the last line without
// a newline is recorded by flush.
func TestLineRecorderSplitsLines(t *testing.T) {
	long := strings.Repeat("x", maxLine+10)
	exact := strings.Repeat("y", maxLine-1) + "\n" // maxLine bytes with its newline
	out := "one\ntw" + "o\r\n" + exact + long + "\nlast"
	// Room for a whole part: Record's default limit would cut it.
	wide := progress.WithLimits(progress.Limits{MaxStringLen: 2 * maxLine, MaxDetailsBytes: 4 * maxLine})
	for _, size := range []int{1, 3, 7, 4096, len(out)} {
		sink := progresstest.NewSink()
		var dst bytes.Buffer
		l := &lineRecorder{ctx: context.Background(), stream: "stdout", dst: &dst, redactor: progress.DefaultRedactor(),
			inv: &Invocation{Recorder: sink.Recorder(wide), Lines: LinesOptions{Type: DefaultLinesType}, Logger: slog.New(slog.DiscardHandler)}}
		for rest := out; rest != ""; {
			n := min(size, len(rest))
			if _, err := io.WriteString(l, rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		l.flush()
		if dst.String() != out {
			t.Errorf("writes of %d: the output changed on the way", size)
		}
		var got []string
		for _, e := range sink.OfType(DefaultLinesType) {
			got = append(got, e.Details["line"].(string))
		}
		want := []string{"one", "two", exact[:maxLine-1], long[:maxLine], long[maxLine:], "last"}
		if !slices.Equal(got, want) {
			t.Errorf("writes of %d: lines of %v bytes, want %v", size, lens(got), lens(want))
		}
	}
}

func lens(s []string) []int {
	out := make([]int, len(s))
	for i, v := range s {
		out[i] = len(v)
	}
	return out
}
