package ansible

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/progress"
)

// TestStreamNoiseAndBigLines interleaves the recorded site stream with what
// real streams also carry (start-up errors and warnings as plain text,
// blank lines, truncated JSON, JSON that is not a job event) and grows one
// event's display text to 2 MB: the events decoded are exactly those of
// the clean stream, and every bad line is counted.
func TestStreamNoiseAndBigLines(t *testing.T) {
	clean := readStream(t, "site")
	want := decodeAll(t, clean)

	lines := bytes.SplitAfter(clean, []byte("\n"))
	noise := []string{
		"\x1b[1;35m[WARNING]: Found both group and host with same name: lb\x1b[0m\r\n",
		"\n",
		`{"uuid": "cut", "counter": 4, "event": "runner_on_ok", "event_data": {"task": ` + "\n",
		`{"hello": "not a job event"}` + "\n",
		"Traceback (most recent call last):\n",
	}
	// And a warning event of a real run (a play whose pattern matched
	// nothing), which becomes a warning of the Result, not an event.
	warning, err := os.ReadFile("testdata/warning-event.json")
	if err != nil {
		t.Fatal(err)
	}
	var noisy bytes.Buffer
	for i, l := range lines {
		if i < len(noise) {
			noisy.WriteString(noise[i])
		}
		if i == 20 {
			noisy.Write(warning)
		}
		if i == 5 { // a TaskCompletedOnHost: pad its display text beyond 2 MB
			var ev map[string]any
			if err := json.Unmarshal(l, &ev); err != nil || ev["event"] != "runner_on_ok" {
				t.Fatalf("line 6 of site.jsonl is not a runner_on_ok event: %v", ev["event"])
			}
			ev["stdout"] = strings.Repeat("x", 2<<20)
			b, _ := json.Marshal(ev)
			l = append(b, '\n')
		}
		noisy.Write(l)
	}
	c := newCapture(t)
	res, err := Stream(context.Background(), &noisy, c.options(t)...)
	if err != nil {
		t.Fatal(err)
	}
	if res.SkippedLines != 4 { // the blank line is not counted
		t.Errorf("skipped %d lines, want 4", res.SkippedLines)
	}
	if want := []string{"[WARNING]: Could not match supplied host pattern, ignoring: nosuchgroup"}; !slices.Equal(res.Warnings, want) {
		t.Errorf("warnings %q, want %q", res.Warnings, want)
	}
	if got := render(c); !reflect.DeepEqual(got, want) {
		t.Errorf("noise changed the events:\n got %d events\nwant %d events", len(got), len(want))
	}
}

// decodeAll returns type and details of every event of a stream.
func decodeAll(t *testing.T, stream []byte) []string {
	t.Helper()
	c := newCapture(t)
	if _, err := Stream(context.Background(), bytes.NewReader(stream), c.options(t)...); err != nil && !errors.Is(err, ErrStatsMissing) {
		t.Fatal(err)
	}
	return render(c)
}

func render(c *capture) []string {
	var out []string
	for _, e := range c.sink.Events() {
		b, _ := json.Marshal(e.Details)
		out = append(out, e.EventName+" "+e.Timestamp.Format(time.RFC3339Nano)+" "+string(b))
	}
	return out
}

// TestStreamLineLimit: a line over the limit is skipped and counted, and
// the lines after it are decoded.
func TestStreamLineLimit(t *testing.T) {
	clean := readStream(t, "fail")
	c := newCapture(t)
	res, err := Stream(context.Background(), bytes.NewReader(clean), append(c.options(t), adapter.WithMaxLineBytes(1200))...)
	if err != nil {
		t.Fatal(err)
	}
	var long int
	for _, l := range bytes.Split(clean, []byte("\n")) {
		if len(l) > 1200 {
			long++
		}
	}
	if long == 0 || res.SkippedLines != long || res.Events+long != bytes.Count(clean, []byte("\n")) {
		t.Errorf("%d lines over the limit, %d skipped, %d events", long, res.SkippedLines, res.Events)
	}
}

// TestStreamLostStats: without the final stats event, the PlaybookResult
// is rebuilt from the results seen, says so, and matches Ansible's own
// recap for this run.
func TestStreamLostStats(t *testing.T) {
	full := readStream(t, "site")
	c := newCapture(t)
	real, err := Stream(context.Background(), bytes.NewReader(full), c.options(t)...)
	if err != nil {
		t.Fatal(err)
	}
	c = newCapture(t)
	rebuilt, err := Stream(context.Background(), bytes.NewReader(withoutStats(full)), c.options(t)...)
	if !errors.Is(err, ErrStatsMissing) || !rebuilt.StatsRebuilt || real.StatsRebuilt {
		t.Fatalf("err %v, rebuilt %v", err, rebuilt.StatsRebuilt)
	}
	if !maps.Equal(rebuilt.Stats, real.Stats) {
		t.Errorf("rebuilt stats %+v, Ansible's %+v", rebuilt.Stats, real.Stats)
	}
	pr := c.sink.OfType(TypePlaybookResult)
	if len(pr) != 1 || pr[0].Details["rebuilt"] != true || !strings.Contains(pr[0].Details["rebuiltReason"].(string), "never arrived") {
		t.Errorf("PlaybookResult does not say it was rebuilt: %v", pr)
	}
	if of := c.sink.OfType(progress.TypeOperationFailed); len(of) != 1 {
		t.Errorf("a run without its recap must not be reported as completed: %v", c.sink.Types())
	}
	if len(c.spans.Started()) != len(c.spans.Ended()) {
		t.Errorf("%d spans started, %d ended", len(c.spans.Started()), len(c.spans.Ended()))
	}
}

// TestStreamNotEvents: a stream without any job event (Ansible's own
// error text, garbage, NUL bytes, nothing) is still reported, as a failed
// operation whose description says that no job event came, with
// Ansible's error when the text holds one.
func TestStreamNotEvents(t *testing.T) {
	for _, tc := range []struct {
		name, in, description string
	}{
		{"ansible error", "\x1b[0;31mERROR! the playbook: site.yml could not be found\x1b[0m\r\n",
			"no Ansible job event was read: the playbook: site.yml could not be found"},
		{"empty", "", "no Ansible job event was read"},
		{"garbage", "{\"hello\": 1}\nnot json\n\x00\x00\x00\n", "no Ansible job event was read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCapture(t)
			before := time.Now()
			res, err := Stream(context.Background(), strings.NewReader(tc.in), c.options(t)...)
			if !errors.Is(err, ErrNoEvents) {
				t.Fatalf("err = %v, want ErrNoEvents", err)
			}
			if tc.name == "ansible error" && !strings.Contains(err.Error(), "the playbook: site.yml could not be found") {
				t.Errorf("err = %v: Ansible's error is lost", err)
			}
			if res.Events != 0 {
				t.Errorf("%d events", res.Events)
			}
			assertOnlyStartFail(t, c, tc.description)
			if start := c.sink.Events()[0].Timestamp; start.Before(before.Add(-time.Second)) {
				t.Errorf("OperationStarted at %v, before the stream was read (%v)", start, before)
			}
		})
	}
}

// TestStreamCut: a real run's stream cut before its end (at several
// places, the recap never reached) is a failed operation that says so;
// every span it opened ends with it, and those Ansible reported no end for
// have an error status saying so.
func TestStreamCut(t *testing.T) {
	lines := bytes.SplitAfter(readStream(t, "site"), []byte("\n"))
	for _, n := range []int{1, 3, 10, len(lines) / 2, len(lines) - 2} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			c := newCapture(t)
			res, err := Stream(context.Background(), bytes.NewReader(bytes.Join(lines[:n], nil)), c.options(t)...)
			checkRun(t, c, res)
			if !errors.Is(err, ErrStatsMissing) {
				t.Fatalf("err = %v, want ErrStatsMissing", err)
			}
			types := c.sink.Types()
			if types[0] != progress.TypeOperationStarted || types[len(types)-1] != progress.TypeOperationFailed {
				t.Fatalf("not framed by OperationStarted … OperationFailed: %v", types)
			}
			of := c.sink.OfType(progress.TypeOperationFailed)[0].Details
			if of["failureCode"] != progress.FailureInternal || of["description"] != "the run ended before Ansible's recap" {
				t.Errorf("OperationFailed %v", of)
			}
			if started, ended := len(c.spans.Started()), len(c.spans.Ended()); started != ended {
				t.Errorf("%d spans started, %d ended", started, ended)
			}
			for _, s := range c.spans.Ended() {
				if s.Status().Code == codes.Unset && spanOutcome(s) == "" {
					t.Errorf("span %s ended with neither status nor outcome", s.Name())
				}
				if strings.HasPrefix(s.Name(), "host ") && spanOutcome(s) == outcome.Failed &&
					s.Status().Description != "Ansible reported no end" && s.Status().Description != "failed" {
					t.Errorf("span %s: status %v", s.Name(), s.Status())
				}
			}
		})
	}
}

// spanOutcome is a span's progress.outcome.
func spanOutcome(s sdktrace.ReadOnlySpan) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == outcome.Key {
			return kv.Value.AsString()
		}
	}
	return ""
}

// TestStreamCancel: cancelling ctx stops a Stream blocked on a pipe, and
// every span it opened is ended.
func TestStreamCancel(t *testing.T) {
	pr, pw := testutil.Pipe(t)
	lines := bytes.SplitAfter(readStream(t, "site"), []byte("\n"))
	for _, l := range lines[:10] {
		if _, err := pw.Write(l); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := newCapture(t)
	done := make(chan error, 1)
	go func() {
		_, err := Stream(ctx, pr, c.options(t)...)
		done <- err
	}()
	for deadline := time.Now().Add(time.Minute); len(c.sink.OfType(TypeTaskStartedOnHost)) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first lines were never decoded")
		}
	}
	cancelledAt := time.Now()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	assertEnded(t, c)
	of := c.sink.OfType(progress.TypeOperationFailed)
	if len(of) != 1 || of[0].Details["description"] != "cancelled" {
		t.Fatalf("OperationFailed %v", of)
	}
	// The stream stopped now: its end is now, not Ansible's last event
	// (recorded months ago).
	if of[0].Timestamp.Before(cancelledAt) {
		t.Errorf("OperationFailed at %v, before the cancel at %v", of[0].Timestamp, cancelledAt)
	}
	st := newSpanTree(c.spans.Ended())
	for _, s := range st.spans {
		if s.EndTime().Before(cancelledAt) {
			continue // ended by Ansible before the cut
		}
		assertSpan(t, s, codes.Unset, outcome.Cancelled)
	}
}

// TestStreamEnvelope: the caller's envelope is on every event.
func TestStreamEnvelope(t *testing.T) {
	c := newCapture(t)
	env := progress.Envelope{Component: progress.Component{Name: "ansible-lifecycle-driver", Version: "3.4.0"},
		Resource: progress.Resource{Type: "resource::nginx::1.0", ID: "nginx-1"}}
	if _, err := Stream(context.Background(), bytes.NewReader(readStream(t, "fail")), append(c.options(t), adapter.WithEnvelope(env))...); err != nil {
		t.Fatal(err)
	}
	for _, e := range c.sink.Events() {
		if e.Component != env.Component || e.Resource != env.Resource {
			t.Fatalf("%s: envelope %+v", e.EventName, e.Envelope)
		}
	}
}

func TestParseTaskArgs(t *testing.T) {
	red := progress.DefaultRedactor()
	for _, tc := range []struct {
		in     string
		want   map[string]any
		hidden bool
	}{
		{"", map[string]any{}, false},
		{censoredMessage, nil, true},
		{"name=nginx, state=present", map[string]any{"name": "nginx", "state": "present"}, false},
		{"_raw_params=echo a, b=c, d", map[string]any{"_raw_params": "echo a", "b": "c, d"}, false},
		{"msg=hello, world", map[string]any{"msg": "hello, world"}, false},
		{"_raw_params=ls, _ansible_check_mode=False, _ansible_no_log=False", map[string]any{"_raw_params": "ls"}, false},
		// A secret key takes the rest: its value's end is unknowable.
		{"user=bob, password=a, b=c, home=/home/bob", map[string]any{"user": "bob", "password": "a, b=c, home=/home/bob"}, false},
		{"opts={'a': 1, 'b': 2}, n=3", map[string]any{"opts": "{'a': 1, 'b': 2}", "n": "3"}, false},
		{"garbage", map[string]any{}, false},
	} {
		got, hidden := parseTaskArgs(tc.in, red)
		if hidden != tc.hidden || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseTaskArgs(%q) = %v, %v; want %v, %v", tc.in, got, hidden, tc.want, tc.hidden)
		}
	}
}

func TestCleanText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"\x1b[0;31mERROR! boom\x1b[0m\r\n", 100, "ERROR! boom"},
		{"a\x00b\x07c\u009bd\x7f", 100, "abcd"},
		{"line 1\r\nline 2", 100, "line 1\nline 2"},
		{"caf\xe9", 100, "caf"},
		{strings.Repeat("é", 10), 9, strings.Repeat("é", 4)}, // cut on a rune boundary
	} {
		if got := cleanText(tc.in, tc.max); got != tc.want {
			t.Errorf("cleanText(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

// TestStreamStoppedWithCause: a caller that stops the stream with a cause
// (the tool could not start) gets that cause as the run's failure.
func TestStreamStoppedWithCause(t *testing.T) {
	pr, _ := testutil.Pipe(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("ansible-playbook: command not found"))
	c := newCapture(t)
	_, err := Stream(ctx, pr, c.options(t)...)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "command not found") {
		t.Fatalf("err = %v, want context.Canceled with the cause", err)
	}
	assertOnlyStartFail(t, c, "stopped: ansible-playbook: command not found")
}
