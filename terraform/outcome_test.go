package terraform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"

	"github.com/progressotel/progressotel/adapter"
	outcomes "github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

// These tests hold the adapter to what happened in real OpenTofu runs:
// a stream cut short is a failure, a stop is a cancellation, the progress
// counts what was done, and the adapter's heartbeat needs nothing from the
// tool.

// rawTee records the raw stream of a run into w too.
func rawTee(w io.Writer) Option {
	return adapter.Own(func(c *config) {
		if c.RawTee != nil {
			w = io.MultiWriter(c.RawTee, w)
		}
		c.RawTee = w
	})
}

// realStream runs the real tool with Run on a configuration and returns
// its raw stream, as Stream would read it.
func realStream(t *testing.T, config string, wantOK bool) []byte {
	t.Helper()
	var raw bytes.Buffer
	c := newCapture(t)
	res, err := Run(context.Background(), Command{Binary: tofu(t), Dir: workdir(t, config), Args: []string{"apply"}, Init: true,
		Env: offline(t), SensitiveVars: map[string]any{"db_password": dbPassword}}, c.opts(rawTee(&raw))...)
	checkRun(t, c, res)
	if (err == nil) != wantOK {
		t.Fatalf("Run of %s: %v", config, err)
	}
	return raw.Bytes()
}

// TestStreamCutShortIsAFailure cuts the real streams of a clean apply and
// of one whose provisioners fail at every line and in the middle of every
// line: whatever the cut, the stream is whole only where it holds the
// tool's own last word. Everywhere else Stream fails with ErrIncomplete
// (or with the error diagnostics the tool did report), records
// common/OperationFailed saying so, and the operations it left open are
// spans whose status says the tool reported no end.
func TestStreamCutShortIsAFailure(t *testing.T) {
	for _, tc := range []struct {
		config string
		ok     bool
	}{{"lifecycle", true}, {"failing", false}} {
		t.Run(tc.config, func(t *testing.T) {
			raw := realStream(t, tc.config, tc.ok)
			lines := bytes.SplitAfter(bytes.TrimRight(raw, "\n"), []byte("\n"))
			// Where the stream reads as whole: after the init's success
			// until the plan starts, after the plan's summary until the
			// first resource operation starts (nothing in the stream
			// tells an init or a plan from the start of an apply), and
			// after the apply's summary.
			planEnd, applyStart, applyEnd, firstError := -1, -1, -1, len(lines)
			initEnd, planStart := -1, -1
			for i, l := range lines {
				var m struct {
					Type    string
					Message string `json:"@message"`
					Changes *struct{ Operation string }
					Diag    *struct{ Severity string } `json:"diagnostic"`
				}
				if err := json.Unmarshal(l, &m); err != nil {
					continue
				}
				switch {
				case m.Type == "output" && strings.HasSuffix(m.Message, "successfully initialized!"):
					initEnd = i
				case initEnd >= 0 && planStart < 0 && slices.Contains([]string{"planned_change", "refresh_start", "apply_start"}, m.Type):
					planStart = i
				}
				switch {
				case m.Type == "change_summary" && m.Changes.Operation == "plan":
					planEnd = i
				case m.Type == "apply_start" && applyStart < 0:
					applyStart = i
				case m.Type == "change_summary":
					applyEnd = i
				case m.Type == "diagnostic" && m.Diag.Severity == "error" && firstError == len(lines):
					firstError = i
				}
			}
			if initEnd < 0 || planStart < initEnd || planEnd < 0 || applyStart < planEnd || (tc.ok && applyEnd < applyStart) || (!tc.ok && firstError == len(lines)) {
				t.Fatalf("the stream is not what the test expects: plan %d, start %d, end %d, error %d", planEnd, applyStart, applyEnd, firstError)
			}
			whole := func(last int) bool {
				return (last >= initEnd && last < planStart) || (last >= planEnd && last < applyStart) || (tc.ok && last >= applyEnd)
			}
			cuts := 0
			for n := 1; n <= len(lines); n++ {
				prefix := bytes.Join(lines[:n], nil)
				// Cut after line n-1, and in the middle of line n-1.
				half := bytes.Join(lines[:n-1], nil)
				half = append(half, lines[n-1][:len(lines[n-1])/2]...)
				for i, in := range [][]byte{prefix, half} {
					last := n - 1 - i // the last whole line
					if n == len(lines) && i == 0 {
						continue // the whole stream: TestGolden's and the real-tool tests' business
					}
					cuts++
					checkCut(t, fmt.Sprintf("%d lines%s", n, []string{"", " and a half"}[i]), in, whole(last), last < firstError)
				}
			}
			if cuts < 60 {
				t.Fatalf("only %d cuts", cuts)
			}
		})
	}
}

// checkCut streams one cut stream: whole, it is reported as the tool
// reported it; not, it fails, and before any error diagnostic the failure
// is ErrIncomplete.
func checkCut(t *testing.T, name string, in []byte, whole, beforeErrors bool) {
	t.Helper()
	c := newCapture(t)
	res, err := Stream(context.Background(), bytes.NewReader(in), c.opts()...)
	checkRun(t, c, res)
	evs := c.sink.Events()
	if len(evs) < 2 {
		t.Fatalf("%s: events %v", name, names(evs))
	}
	last := evs[len(evs)-1]
	if whole {
		if !beforeErrors {
			return
		}
		if err != nil || last.EventName != progress.TypeOperationCompleted {
			t.Errorf("%s: a whole stream: %v, %s", name, err, last.EventName)
		}
		return
	}
	var opErr *OperationError
	if !errors.As(err, &opErr) || res.OK() || last.EventName != progress.TypeOperationFailed {
		t.Fatalf("%s: a cut stream gave %v, OK %v, last event %s", name, err, res.OK(), last.EventName)
	}
	if !beforeErrors {
		return // the tool's error diagnostics say why
	}
	desc, _ := last.Details["description"].(string)
	if res.Messages == 0 { // half of the first line
		if !errors.Is(err, ErrNoMessages) || last.Details["failureCode"] != progress.FailureInternal {
			t.Errorf("%s: error %v, OperationFailed %v", name, err, last.Details)
		}
		return
	}
	if !errors.Is(err, ErrIncomplete) || last.Details["failureCode"] != progress.FailureInternal ||
		!strings.HasPrefix(desc, "the stream ended before the tool's final message") {
		t.Errorf("%s: error %v, OperationFailed %v", name, err, last.Details)
	}
	cmd := c.spansNamed("terraform")
	if len(cmd) != 1 || cmd[0].Status().Code != codes.Error || attr(cmd[0], outcomes.Key) != outcomes.Failed {
		t.Errorf("%s: command span %v", name, cmd)
	}
	// An operation started and not ended says so.
	started := len(c.sink.OfType(TypeApplyStarted))
	ended := len(c.sink.OfType(TypeApplyCompleted)) + len(c.sink.OfType(TypeApplyErrored))
	noEnds := 0
	for _, s := range c.spans.Ended() {
		if s.Status().Description == noEnd && attr(s, outcomes.Key) == outcomes.Failed {
			noEnds++
		}
	}
	if started > ended && noEnds == 0 {
		t.Errorf("%s: %d operations started, %d ended, and no span says the tool reported no end", name, started, ended)
	}
}

// TestSavedPlanApplyHasNoTotal applies a saved plan with the real tool:
// the stream has no plan summary, so the total is unknown. The progress
// says so by having none, never by a total of 0, and N counts up.
func TestSavedPlanApplyHasNoTotal(t *testing.T) {
	bin, dir, env := tofu(t), workdir(t, "lifecycle"), offline(t)
	plan := filepath.Join(t.TempDir(), "tfplan")
	secret := map[string]any{"db_password": dbPassword}
	pc := newCapture(t)
	planned, err := Run(context.Background(), Command{Binary: bin, Dir: dir, Init: true, Env: env, SensitiveVars: secret,
		Args: []string{"plan", "-out=" + plan}}, pc.opts()...)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	checkRun(t, pc, planned)
	c := newCapture(t)
	res, err := Run(context.Background(), Command{Binary: bin, Dir: dir, Env: env, Args: []string{"apply", plan}}, c.opts()...)
	checkRun(t, c, res)
	if err != nil {
		t.Fatalf("apply of the saved plan: %v", err)
	}
	if res.Plan != nil || res.Total != progress.UnknownTotal || res.Completed != 6 {
		t.Fatalf("plan %+v, total %d, completed %d", res.Plan, res.Total, res.Completed)
	}
	ps := c.sink.OfType(progress.TypeProgress)
	if len(ps) != 6 {
		t.Fatalf("%d progress events, want 6", len(ps))
	}
	for i, p := range ps {
		if _, has := p.Details["total"]; has || p.Details["completed"] != int64(i+1) {
			t.Errorf("progress %d: %v, want completed %d and no total", i, p.Details, i+1)
		}
	}
	assertFraming(t, c.sink.Events(), progress.TypeOperationCompleted)
}

// TestAdapterHeartbeat applies a provisioner that is silent for 3 s, well
// under the tool's own 10 s heartbeat: the adapter's heartbeat says the
// operation is still running, in its span, and stops with it.
func TestAdapterHeartbeat(t *testing.T) {
	c := newCapture(t)
	res, err := Run(context.Background(), Command{Binary: tofu(t), Dir: workdir(t, "quiet"), Args: []string{"apply"}, Init: true,
		Env: offline(t)}, c.opts(WithHeartbeat(300*time.Millisecond))...)
	checkRun(t, c, res)
	if err != nil || res.Completed != 1 {
		t.Fatalf("Run: %v, %+v", err, res)
	}
	op := only(t, c.spansNamed("create terraform_data.quiet"))
	beats := 0
	for _, e := range c.sink.OfType(TypeApplyProgress) {
		if e.Details["source"] != heartbeatSource {
			t.Errorf("a heartbeat of the tool's in a 3 s operation: %v", e.Details)
			continue
		}
		beats++
		if e.SpanID != op.SpanContext().SpanID() || e.Details["address"] != "terraform_data.quiet" || e.Details["action"] != "create" {
			t.Errorf("heartbeat %v is not the operation's", e.Details)
		}
		if e.Timestamp.After(op.EndTime()) {
			t.Errorf("a heartbeat at %v after the operation ended at %v", e.Timestamp, op.EndTime())
		}
	}
	if beats == 0 {
		t.Error("no heartbeat of the adapter's during 3 s of silence")
	}
}

// TestOutputsKeepTheirShape: an output whose name looks secret is redacted
// by value and keeps the shape of every other output.
func TestOutputsKeepTheirShape(t *testing.T) {
	c := newCapture(t)
	res, err := Run(context.Background(), Command{Binary: tofu(t), Dir: workdir(t, "lifecycle"), Args: []string{"apply"}, Init: true,
		Env: offline(t), SensitiveVars: map[string]any{"db_password": dbPassword}}, c.opts()...)
	checkRun(t, c, res)
	if err != nil {
		t.Fatal(err)
	}
	evs := c.sink.OfType(TypeOutputs)
	outs, _ := evs[len(evs)-1].Details["outputs"].([]any)
	if len(outs) != 3 {
		t.Fatalf("outputs %#v", evs[len(evs)-1].Details)
	}
	byName := map[string]map[string]any{}
	for _, o := range outs {
		m, ok := o.(map[string]any)
		if !ok {
			t.Fatalf("an output that is not an object: %#v", o)
		}
		byName[m["name"].(string)] = m
	}
	if o := byName["password_out"]; o == nil || o["sensitive"] != false || o["value"] != wire.Redacted {
		t.Errorf("password_out %#v", o)
	}
	if o := byName["connection_string"]; o == nil || o["sensitive"] != true || o["value"] != nil {
		t.Errorf("connection_string %#v", o)
	}
	if ids, _ := byName["web_ids"]["value"].([]any); len(ids) != 3 {
		t.Errorf("web_ids %#v", byName["web_ids"])
	}
	if v := res.Outputs["password_out"].Value; v != wire.Redacted {
		t.Errorf("Result.Outputs[password_out] = %#v", v)
	}
	assertNoSecret(t, c, res, err, "generation-1")
}
