package ansible

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.txt from the recorded streams")

// goldenCases are the recorded real streams, and one cut before Ansible's
// recap (the lost final event).
var goldenCases = []struct {
	name, stream string
	cut          func([]byte) []byte
}{
	{"site", "site", nil},
	{"fail", "fail", nil},
	{"prompt", "prompt", nil},
	{"delegate", "delegate", nil},
	{"site-nostats", "site", withoutStats},
	// Recorded from the playbooks beside them in testdata/streams: a
	// failure a rescue section takes (on every host; on one, whose rescue
	// task fails in turn), one that an always section does not take,
	// strategy free, flush_handlers, and a no_log loop under ignore_errors.
	{"rescue", "rescue", nil},
	{"rescuefail", "rescuefail", nil},
	{"always", "always", nil},
	{"free", "free", nil},
	{"flush", "flush", nil},
	{"nolog", "nolog", nil},
	// Issue 33: a rescued failure while another host is still in the
	// block, ignore_unreachable, Ansible's own error during a play, and
	// meta end_host under a when, a result runner stripped.
	{"rescuelag", "rescuelag", nil},
	{"ignunreach", "ignunreach", nil},
	{"nohandler", "nohandler", nil},
	{"endhost", "endhost", nil},
	{"stripped", "stripped", nil},
}

// withoutStats drops the playbook_on_stats line: the stream of a run whose
// final event was lost.
func withoutStats(b []byte) []byte {
	var out [][]byte
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if !bytes.Contains(l, []byte(`"event": "playbook_on_stats"`)) {
			out = append(out, l)
		}
	}
	return bytes.Join(out, nil)
}

func readStream(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "streams", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGolden decodes the streams recorded from real Ansible runs and
// compares every event (type, severity, span, details, time) and the span
// tree (names, times, status, attributes) with testdata/golden. It covers
// the whole mapping without Ansible installed.
func TestGolden(t *testing.T) {
	for _, gc := range goldenCases {
		t.Run(gc.name, func(t *testing.T) {
			in := readStream(t, gc.stream)
			if gc.cut != nil {
				in = gc.cut(in)
			}
			c := newCapture(t)
			res, err := Stream(context.Background(), bytes.NewReader(in), c.options(t)...)
			checkRun(t, c, res)
			got := renderRun(res, err, c)
			path := filepath.Join("testdata", "golden", gc.name+".txt")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("decoded %s differs from %s (run with -update after checking the diff):\n%s",
					gc.name, path, testutil.DiffLines(string(want), got))
			}
		})
	}
}

// renderRun is a stable text of what a run reported: times are offsets
// from the playbook's start, so the text depends only on the stream.
func renderRun(res Result, err error, c *capture) string {
	var b strings.Builder
	fmt.Fprintf(&b, "error: %v\n", err)
	fmt.Fprintf(&b, "rc=%d events=%d skipped=%d statsRebuilt=%v failed=%v unreachable=%v\n",
		res.ExitCode, res.Events, res.SkippedLines, res.StatsRebuilt, res.FailedHosts, res.UnreachableHosts)
	for _, h := range slices.Sorted(maps.Keys(res.Stats)) {
		fmt.Fprintf(&b, "stats %s %+v\n", h, res.Stats[h])
	}
	for _, p := range res.Plays {
		fmt.Fprintf(&b, "play %q %s\n", p.Name, p.ID)
	}

	spans := c.spans.Ended()
	var origin time.Time
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID()] = s
		if !s.Parent().IsValid() {
			origin = s.StartTime()
		}
	}
	path := func(id trace.SpanID) string {
		var names []string
		for s, ok := byID[id]; ok; s, ok = byID[s.Parent().SpanID()] {
			names = append([]string{s.Name()}, names...)
		}
		return strings.Join(names, " > ")
	}
	offset := func(t time.Time) string { return fmt.Sprintf("+%.3fs", t.Sub(origin).Seconds()) }

	b.WriteString("\n# events: time, severity, type, span, details\n")
	for _, e := range c.sink.Events() {
		details, _ := json.Marshal(e.Details)
		fmt.Fprintf(&b, "%s %s %s [%s] %s\n", offset(e.Timestamp), e.Severity, e.EventName, path(e.SpanID), details)
	}

	b.WriteString("\n# spans: start, duration, status, attributes\n")
	slices.SortStableFunc(spans, func(x, y sdktrace.ReadOnlySpan) int {
		if c := x.StartTime().Compare(y.StartTime()); c != 0 {
			return c
		}
		return strings.Compare(path(x.SpanContext().SpanID()), path(y.SpanContext().SpanID()))
	})
	for _, s := range spans {
		depth := strings.Count(path(s.SpanContext().SpanID()), " > ")
		attrs := make([]string, 0, len(s.Attributes()))
		for _, kv := range s.Attributes() {
			attrs = append(attrs, string(kv.Key)+"="+attrText(kv.Value))
		}
		slices.Sort(attrs)
		fmt.Fprintf(&b, "%s%s %s %.3fs %s %q %s\n", strings.Repeat("  ", depth), s.Name(), offset(s.StartTime()),
			s.EndTime().Sub(s.StartTime()).Seconds(), s.Status().Code, s.Status().Description, strings.Join(attrs, " "))
	}
	return b.String()
}

func attrText(v attribute.Value) string {
	if v.Type() == attribute.STRING {
		return fmt.Sprintf("%q", v.AsString())
	}
	return v.String()
}
