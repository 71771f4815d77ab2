package ansible

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log"

	"github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/progress"
)

// The cases of issue 33, each with the real Ansible through ansible-runner
// (the playbook beside its recorded stream in testdata/streams, whose
// golden holds the events and the span tree): whatever a live event says
// first, the run's final record agrees with Ansible's recap, which
// runPlaybook checks (checkRun) besides what each test asserts.

func runStreamPlaybook(t *testing.T, name string) (*capture, Result, error) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", "streams", name+".yml"))
	if err != nil {
		t.Fatal(err)
	}
	c, _, res, err := runPlaybook(t, name+".yml", string(text))
	return c, res, err
}

// TestRunRescuedWhileOthersInBlock (case 1): web-1 fails "Step two" in a
// block while web-2 goes on inside the block ("Step three"), and only then
// does web-1 run the rescue. The failure is rescued (recap rescued=1
// failures=0): WARN, rescued, no Error anywhere; settled when the next task
// after the rescue starts, not at the recap.
func TestRunRescuedWhileOthersInBlock(t *testing.T) {
	c, res, err := runStreamPlaybook(t, "rescuelag")
	if err != nil || !res.OK() || res.Stats["web-1"].Rescued != 1 || res.Stats["web-1"].Failures != 0 {
		t.Fatalf("err %v, stats %+v", err, res.Stats)
	}
	failed := c.sink.OfType(TypeTaskFailedOnHost)
	if len(failed) != 1 || failed[0].Severity != log.SeverityWarn || failed[0].Details["rescued"] != true {
		t.Fatalf("TaskFailedOnHost %v, want one WARN marked rescued", failed)
	}
	var at, after int
	for i, e := range c.sink.Events() {
		switch {
		case e.EventName == TypeTaskFailedOnHost:
			at = i
		case e.EventName == TypeTaskStarted && e.Details["taskName"] == "After":
			after = i
		}
	}
	if at > after {
		t.Errorf("the rescued failure was recorded after task After started (event %d, After at %d)", at, after)
	}
	st := newSpanTree(c.spans.Ended())
	assertSpan(t, st.hostSpan(t, "Step two", "web-1"), codes.Unset, outcome.Rescued)
	assertSpan(t, st.only(t, "task Step two"), codes.Unset, outcome.Rescued)
	for _, s := range st.spans {
		if s.Status().Code == codes.Error {
			t.Errorf("span %s has an error status: %v", s.Name(), s.Status())
		}
	}
	if n := len(c.sink.OfType(progress.TypeOperationCompleted)); n != 1 {
		t.Errorf("%d OperationCompleted, want 1", n)
	}
}

// TestRunIgnoreUnreachable (case 2): a host made unreachable under
// ignore_unreachable goes on (recap ignored=1 unreachable=0, status 0): its
// HostUnreachable is WARN and ignored, its spans ignored, no Error, and
// the run completes.
func TestRunIgnoreUnreachable(t *testing.T) {
	c, res, err := runStreamPlaybook(t, "ignunreach")
	if err != nil || res.ExitCode != 0 || !res.OK() || res.Stats["edge-proxy"].Ignored != 1 {
		t.Fatalf("err %v, rc %d, stats %+v", err, res.ExitCode, res.Stats)
	}
	un := c.sink.OfType(TypeHostUnreachable)
	if len(un) != 1 || un[0].Severity != log.SeverityWarn || un[0].Details["ignored"] != true {
		t.Fatalf("HostUnreachable %v, want one WARN marked ignored", un)
	}
	st := newSpanTree(c.spans.Ended())
	assertSpan(t, st.hostSpan(t, "Ping the edge", "edge-proxy"), codes.Unset, outcome.Ignored)
	assertSpan(t, st.hostSpan(t, "Carry on", "edge-proxy"), codes.Unset, outcome.OK)
	for _, s := range st.spans {
		if s.Status().Code == codes.Error {
			t.Errorf("span %s has an error status: %v", s.Name(), s.Status())
		}
	}
	if of := c.sink.OfType(progress.TypeOperationFailed); len(of) != 0 {
		t.Errorf("OperationFailed %v", of)
	}
}

// TestRunAnsibleErrorDuringPlay (case 5): a handler notified that does not
// exist is Ansible's own error during the play, which ends the run before
// its recap. The failure is Ansible's sentence, in the error and in
// OperationFailed; the hosts whose task it cut are cancelled, not failed.
func TestRunAnsibleErrorDuringPlay(t *testing.T) {
	c, res, err := runStreamPlaybook(t, "nohandler")
	const want = "The requested handler 'restart db' was not found"
	var pe *PlaybookError
	if !errors.As(err, &pe) || !strings.Contains(pe.Reason, want) {
		t.Fatalf("err = %v, want a *PlaybookError in Ansible's words", err)
	}
	if len(res.FailedHosts) != 0 || res.ExitCode == 0 {
		t.Errorf("rc %d, failed hosts %v; want a failed run and no failed host", res.ExitCode, res.FailedHosts)
	}
	of := c.sink.OfType(progress.TypeOperationFailed)
	if len(of) != 1 || of[0].Details["description"] != "Ansible stopped the run: "+pe.Reason ||
		of[0].Details["failureCode"] != progress.FailureInternal {
		t.Fatalf("OperationFailed %v", of)
	}
	st := newSpanTree(c.spans.Ended())
	for _, host := range []string{"web-1", "web-2"} {
		s := st.hostSpan(t, "Touch config", host)
		assertSpan(t, s, codes.Unset, outcome.Cancelled)
	}
	assertSpan(t, st.only(t, "playbook nohandler.yml"), codes.Error, outcome.Failed)
}

// TestRunStrippedResult (case 4): a task printing 5 MB, whose result
// ansible-runner strips ({}). Its TaskCompletedOnHost says that the result
// is unknown (resultUnknown) instead of claiming unchanged, and the recap
// (changed=1) settles its span: changed.
func TestRunStrippedResult(t *testing.T) {
	c, res, err := runStreamPlaybook(t, "stripped")
	if err != nil || res.Stats["web-1"].Changed != 1 {
		t.Fatalf("err %v, stats %+v", err, res.Stats)
	}
	var got map[string]any
	for _, e := range c.sink.OfType(TypeTaskCompletedOnHost) {
		if e.Details["taskName"] == "Print five megabytes" {
			got = e.Details
		}
	}
	if got == nil || got["resultUnknown"] != true {
		t.Fatalf("TaskCompletedOnHost %v, want resultUnknown", got)
	}
	st := newSpanTree(c.spans.Ended())
	assertSpan(t, st.hostSpan(t, "Print five megabytes", "web-1"), codes.Unset, outcome.Changed)
	assertSpan(t, st.only(t, "task Print five megabytes"), codes.Unset, outcome.Changed)
	assertSpan(t, st.only(t, "play Big"), codes.Unset, outcome.Changed)
}

// TestRunMetaEndHostWhen (case 3): the result of meta end_host under a
// when carries the start of the host's previous task; the host span still
// starts inside its task's (checkRun: children inside their parents).
func TestRunMetaEndHostWhen(t *testing.T) {
	c, res, err := runStreamPlaybook(t, "endhost")
	if err != nil || res.Stats["web-1"].OK != 2 {
		t.Fatalf("err %v, stats %+v", err, res.Stats)
	}
	st := newSpanTree(c.spans.Ended())
	for _, s := range st.named("host web-1") {
		if p := st.parent(s); s.StartTime().Before(p.StartTime()) {
			t.Errorf("host web-1 of %s starts at %v, before its task (%v)", p.Name(), s.StartTime(), p.StartTime())
		}
	}
}

// TestRunFailureSettledAtPlayEnd: a failure whose host runs nothing more
// in its play had no rescue (a rescue runs within the play): it counts,
// and is recorded when the play ends, before the next play starts, not at
// the recap.
func TestRunFailureSettledAtPlayEnd(t *testing.T) {
	c, _, res, err := runPlaybook(t, "twoplays.yml", `- name: First
  hosts: web
  gather_facts: false
  tasks:
    - name: Fail on one
      command: /bin/false
      when: inventory_hostname == 'web-1'
    - name: Go on
      debug: msg=on
- name: Second
  hosts: web
  gather_facts: false
  tasks:
    - name: Later
      debug: msg=later
`)
	if err == nil || res.Stats["web-1"].Failures != 1 {
		t.Fatalf("err %v, stats %+v", err, res.Stats)
	}
	var failedAt, secondAt int
	for i, e := range c.sink.Events() {
		switch {
		case e.EventName == TypeTaskFailedOnHost:
			failedAt = i
			if e.Severity != log.SeverityError || e.Details["rescued"] != nil {
				t.Errorf("TaskFailedOnHost %v %v, want ERROR, not rescued", e.Severity, e.Details)
			}
		case e.EventName == TypePlayStarted && e.Details["playName"] == "Second":
			secondAt = i
		}
	}
	if failedAt == 0 || secondAt == 0 || failedAt > secondAt {
		t.Errorf("TaskFailedOnHost at event %d, play Second started at %d: want the failure first", failedAt, secondAt)
	}
}
