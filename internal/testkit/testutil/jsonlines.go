package testutil

import (
	"bufio"
	"encoding/json"
	"io"
	"iter"
	"testing"
)

// JSONLines reads JSON lines from r (what the JSON exporter writes, the
// records a file exporter appends), lines of up to 1 MiB, and yields each
// line's text and its fields. A line that is not a JSON object, or a read
// error, fails the test.
func JSONLines(t testing.TB, r io.Reader) iter.Seq2[string, map[string]any] {
	return func(yield func(string, map[string]any) bool) {
		t.Helper()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var fields map[string]any
			if err := json.Unmarshal(sc.Bytes(), &fields); err != nil {
				t.Fatalf("not a JSON line: %q: %v", sc.Text(), err)
			}
			if !yield(sc.Text(), fields) {
				return
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("reading JSON lines: %v", err)
		}
	}
}
