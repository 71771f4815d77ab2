package terraform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log"

	"github.com/progressotel/progressotel/adapter"
	outcomes "github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
)

// TestCancelStopsTheToolAndEveryProcess cancels a real apply of three
// resources once one has completed and while two provisioners run: one
// stops on SIGINT, the other ignores it (its shell is stopped by the tool,
// its sleep is left behind). The tool must stop gracefully (its interrupt
// notice is reported) and no process of the run may be left when Run
// returns. The two stopped operations are cancelled, not done: the bar
// ends at 1 of 3.
func TestCancelStopsTheToolAndEveryProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("looks for processes in /proc")
	}
	bin := tofu(t)
	polite, stubborn := marker(), marker()
	c := newCapture(t)
	var raw bytes.Buffer
	r := startRun(Command{Binary: bin, Dir: workdir(t, "slow"), Args: []string{"apply"}, Init: true, Env: offline(t),
		Vars: map[string]any{"polite_marker": polite, "stubborn_marker": stubborn}},
		c.opts(adapter.WithGracePeriod(2*time.Minute), recordTo(t, "tofu-apply-cancelled.jsonl"), rawTee(&raw))...)
	defer r.cancel()
	waitFor(t, r.done, func() bool { return slowReady(c, polite, stubborn) })
	res, err := r.cancelAndWait(t, 3*time.Minute)
	checkRun(t, c, res)

	if left := append(testutil.ProcessesWith(polite), testutil.ProcessesWith(stubborn)...); len(left) > 0 {
		t.Errorf("processes left after Run returned: %v", left)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want one wrapping context.Canceled", err)
	}
	var opErr *OperationError
	if !errors.As(err, &opErr) {
		t.Fatalf("error %T, want *OperationError", err)
	}
	// The tool stopped by itself on SIGINT, long before the grace period
	// ended: it was not killed, and it said so.
	if res.ExitCode == 128+9 || res.ExitCode <= 0 {
		t.Errorf("exit code %d, want the tool's own failure status", res.ExitCode)
	}
	interrupted := false
	for _, e := range c.sink.OfType(TypeLog) {
		// One line: the tool's line breaks become spaces.
		if strings.HasPrefix(e.Details["message"].(string), "Interrupt received. Please wait") {
			interrupted = true
		}
	}
	if !interrupted {
		t.Errorf("the tool's interrupt notice was not reported on one line: %v", c.sink.OfType(TypeLog))
	}
	evs := c.sink.Events()
	assertFraming(t, evs, progress.TypeOperationFailed)
	if d := evs[len(evs)-1].Details; d["failureCode"] != progress.FailureInternal || !strings.HasPrefix(d["description"].(string), "cancelled") {
		t.Errorf("OperationFailed %v", d)
	}
	assertCancelled(t, c, res, raw.Bytes(), true, []string{"terraform_data.polite", "terraform_data.stubborn"}, "terraform_data.quick")
	if s := only(t, c.spansNamed("tofu apply")); attr(s, outcomes.Key) != outcomes.Cancelled {
		t.Errorf("command span outcome %q", attr(s, outcomes.Key))
	}
}

// TestCancelKillsAToolThatDoesNotStop runs a stand-in for the tool that
// ignores SIGINT: after the grace period, Run kills it and its children.
func TestCancelKillsAToolThatDoesNotStop(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("looks for processes in /proc")
	}
	m := marker()
	fake := filepath.Join(t.TempDir(), "tofu")
	script := fmt.Sprintf(`#!/bin/sh
trap '' INT
echo '{"@level":"info","@message":"OpenTofu 0.0.0","@timestamp":"2026-01-01T00:00:00Z","type":"version","tofu":"0.0.0"}'
sleep %s &
sleep %s
`, m, m)
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c := newCapture(t)
	r := startRun(Command{Binary: fake, Args: []string{"apply"}}, c.opts(adapter.WithGracePeriod(300*time.Millisecond))...)
	defer r.cancel()
	waitFor(t, r.done, func() bool { return len(c.sink.OfType(TypeVersion)) == 1 && len(testutil.ProcessesWith(m)) == 2 })
	res, err := r.cancelAndWait(t, time.Minute)
	checkRun(t, c, res)
	if left := testutil.ProcessesWith(m); len(left) > 0 {
		t.Errorf("processes left after Run returned: %v", left)
	}
	if !errors.Is(err, context.Canceled) || res.ExitCode != 128+9 {
		t.Errorf("error %v, exit code %d: want a cancellation and a kill", err, res.ExitCode)
	}
}

// marker returns a sleep duration unique to this test run, by which its
// processes are found.
func marker() string {
	return fmt.Sprintf("%d.%d%04d", 900+rand.IntN(99), os.Getpid(), rand.IntN(10000))
}

// backgroundRun is a Run going on in the background.
type backgroundRun struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when Run has returned
	res    Result
	err    error
}

// startRun starts Run(c, opts) in the background, with a context that
// cancel cancels.
func startRun(c Command, opts ...Option) *backgroundRun {
	ctx, cancel := context.WithCancel(context.Background())
	r := &backgroundRun{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.res, r.err = Run(ctx, c, opts...)
	}()
	return r
}

// cancelAndWait cancels the run and returns what Run returned, failing
// the test when it takes longer than limit.
func (r *backgroundRun) cancelAndWait(t *testing.T, limit time.Duration) (Result, error) {
	t.Helper()
	r.cancel()
	select {
	case <-r.done:
	case <-time.After(limit):
		t.Fatal("Run did not return after the cancellation")
	}
	return r.res, r.err
}

// waitFor polls cond until it holds; it fails the test when done is
// closed first or after two minutes.
func waitFor(t *testing.T, done <-chan struct{}, cond func() bool) {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for !cond() {
		select {
		case <-done:
			t.Fatal("Run returned before the condition held")
		case <-deadline:
			t.Fatal("timed out waiting")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// slowReady reports whether an apply of the slow configuration is where a
// stop is tested: quick is done, and both provisioners said they are ready,
// so the stubborn one has set its trap (a signal before that would kill it).
func slowReady(c *capture, polite, stubborn string) bool {
	ready := 0
	for _, e := range c.sink.OfType(TypeProvisionOutput) {
		if strings.HasSuffix(e.Details["output"].(string), " ready") {
			ready++
		}
	}
	return ready == 2 && len(c.sink.OfType(TypeApplyCompleted)) == 1 &&
		len(testutil.ProcessesWith(polite)) > 0 && len(testutil.ProcessesWith(stubborn)) > 0
}

// assertCancelled checks what a stopped apply of the slow configuration
// reports: N counts what completed (done), of the plan's 3; the stopped
// operations are cancelled (events at WARN with cancelled set, spans with
// outcome cancelled, the Result) and not errored; the tool's repeated "execution
// halted" is recorded once, with its repeats in raw (the tool's own stream)
// counted. How many the tool writes depends on which of its commands died of
// the signal first: the golden tofu-apply-cancelled holds a stream with repeats.
func assertCancelled(t *testing.T, c *capture, res Result, raw []byte, ctxCancelled bool, stopped []string, done string) {
	t.Helper()
	slices.Sort(res.CancelledResources)
	if res.Completed != 1 || res.Cancelled != 2 || res.Errored != 0 || res.Total != 3 ||
		!slices.Equal(res.CancelledResources, stopped) || len(res.ErroredResources) != 0 {
		t.Errorf("completed %d, cancelled %d %v, errored %d %v of %d", res.Completed, res.Cancelled,
			res.CancelledResources, res.Errored, res.ErroredResources, res.Total)
	}
	wantProgressEnd(t, c.sink, [2]int64{1, 3})
	// The events of what errored after the stop say it was cancelled;
	// with Ctrl-C, a command may die before the tool's interrupt notice,
	// and its event was recorded as an error before the notice came.
	evs := c.sink.Events()
	notice := slices.IndexFunc(evs, func(e progresstest.Event) bool {
		m, _ := e.Details["message"].(string)
		return e.EventName == TypeLog && strings.HasPrefix(m, "Interrupt received")
	})
	if notice < 0 {
		t.Fatal("no interrupt notice")
	}
	for _, typ := range []string{TypeApplyErrored, TypeProvisionErrored} {
		if n := len(c.sink.OfType(typ)); n != 2 {
			t.Errorf("%d %s, want 2", n, typ)
		}
	}
	for i, e := range evs {
		if e.EventName != TypeApplyErrored && e.EventName != TypeProvisionErrored {
			continue
		}
		if (i > notice || ctxCancelled) && (e.Details["cancelled"] != true || e.Severity != log.SeverityWarn) {
			t.Errorf("%s %v at %v: want cancelled, at WARN", e.EventName, e.Details, e.Severity)
		}
	}
	for _, addr := range stopped {
		if s := only(t, c.spansNamed("create "+addr)); attr(s, outcomes.Key) != outcomes.Cancelled {
			t.Errorf("%s span outcome %q, want cancelled", addr, attr(s, outcomes.Key))
		}
	}
	if s := only(t, c.spansNamed("create "+done)); attr(s, outcomes.Key) != outcomes.Changed || s.Status().Code == codes.Error {
		t.Errorf("%s span outcome %q, status %v", done, attr(s, outcomes.Key), s.Status())
	}
	written := 0
	for line := range bytes.Lines(raw) {
		var msg struct {
			Diagnostic struct{ Summary string }
		}
		if json.Unmarshal(line, &msg) == nil && msg.Diagnostic.Summary == "execution halted" {
			written++
		}
	}
	if written == 0 {
		t.Fatal("the tool wrote no execution halted diagnostic")
	}
	halted := 0
	for _, e := range c.sink.OfType(TypeDiagnostic) {
		if e.Details["summary"] == "execution halted" {
			halted++
		}
	}
	if halted != 1 {
		t.Errorf("%d execution halted diagnostics, want 1", halted)
	}
	for _, d := range res.Diagnostics {
		if d.Summary == "execution halted" && d.Repeated != written-1 {
			t.Errorf("the tool wrote execution halted %d times; the Result counts %d repeats: %+v", written, d.Repeated, d)
		}
		if strings.Contains(d.Detail, "\n") {
			t.Errorf("a diagnostic's detail keeps a line break: %q", d.Detail)
		}
	}
}
