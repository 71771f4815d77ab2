package ansible

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/progress"
)

// The tests of this file run playbooks written for each case with the
// real Ansible through ansible-runner, and check what a watcher relies on:
// the events, the span tree with each span's status and progress.outcome,
// and the run's end.

// runPlaybook writes text to name in a fresh project and runs it on the
// test inventory; warnings collects what the adapter logged at WARN.
func runPlaybook(t *testing.T, name, text string, opts ...Option) (c *capture, warnings *testutil.SyncBuffer, res Result, err error) {
	t.Helper()
	return runPlaybookIn(t, newCapture(t), name, text, opts...)
}

// runPlaybookIn is runPlaybook recording into c.
func runPlaybookIn(t *testing.T, c *capture, name, text string, opts ...Option) (_ *capture, warnings *testutil.SyncBuffer, res Result, err error) {
	t.Helper()
	requireAnsible(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	warnings = &testutil.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(io.MultiWriter(warnings, testWriter{t}), &slog.HandlerOptions{Level: slog.LevelWarn}))
	res, err = Run(context.Background(), Playbook{ProjectDir: dir, Playbook: name, Inventory: inventory(t)},
		append(append(c.options(t), adapter.WithLogger(logger)), opts...)...)
	checkRun(t, c, res)
	return c, warnings, res, err
}

// spanTree indexes a run's ended spans.
type spanTree struct {
	spans []sdktrace.ReadOnlySpan
	byID  map[trace.SpanID]sdktrace.ReadOnlySpan
}

func newSpanTree(spans []sdktrace.ReadOnlySpan) spanTree {
	st := spanTree{spans: spans, byID: map[trace.SpanID]sdktrace.ReadOnlySpan{}}
	for _, s := range spans {
		st.byID[s.SpanContext().SpanID()] = s
	}
	return st
}

// named returns the spans named name, in start order.
func (st spanTree) named(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range st.spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	return out
}

func (st spanTree) parent(s sdktrace.ReadOnlySpan) sdktrace.ReadOnlySpan {
	return st.byID[s.Parent().SpanID()]
}

// children returns the spans whose parent is s.
func (st spanTree) children(s sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, c := range st.spans {
		if c.Parent().SpanID() == s.SpanContext().SpanID() {
			out = append(out, c)
		}
	}
	return out
}

// hostSpan is the span of host under the task span named task.
func (st spanTree) hostSpan(t *testing.T, task, host string) sdktrace.ReadOnlySpan {
	t.Helper()
	for _, s := range st.named("host " + host) {
		if p := st.parent(s); p != nil && p.Name() == "task "+task {
			return s
		}
	}
	t.Fatalf("no span host %s under task %s", host, task)
	return nil
}

func (st spanTree) only(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	s := st.named(name)
	if len(s) != 1 {
		t.Fatalf("%d spans named %q, want 1", len(s), name)
	}
	return s[0]
}

// startedTasks counts the TaskStarted events per task name.
func startedTasks(c *capture) map[string]int {
	started := map[string]int{}
	for _, e := range c.sink.OfType(TypeTaskStarted) {
		started[e.Details["taskName"].(string)]++
	}
	return started
}

// assertEnded: every span started was ended, with an outcome.
func assertEnded(t *testing.T, c *capture) {
	t.Helper()
	if started, ended := len(c.spans.Started()), len(c.spans.Ended()); started != ended {
		t.Errorf("%d spans started, %d ended", started, ended)
	}
	for _, s := range c.spans.Ended() {
		if spanOutcome(s) == "" {
			t.Errorf("span %s has no %s", s.Name(), outcome.Key)
		}
	}
}

func assertSpan(t *testing.T, s sdktrace.ReadOnlySpan, code codes.Code, how string) {
	t.Helper()
	if s.Status().Code != code || spanOutcome(s) != how {
		t.Errorf("span %s: status %v %q, outcome %q; want %v, %q", s.Name(), s.Status().Code, s.Status().Description,
			spanOutcome(s), code, how)
	}
}

// TestRunRescued: a task failing inside a block whose rescue section
// recovers is no failure of the play or the run (Ansible's recap says
// rescued=1 failures=0): the TaskFailedOnHost event is kept, marked
// rescued, at WARN; the failing task's spans say rescued without an error
// status; nothing else is an error. In the second play the host goes on,
// which settles the failure before the recap.
func TestRunRescued(t *testing.T) {
	c, _, res, err := runPlaybook(t, "rescue.yml", `- name: Install
  hosts: web
  gather_facts: false
  tasks:
    - block:
        - name: Try the fast path
          command: /bin/false
          when: inventory_hostname == 'web-1'
      rescue:
        - name: Fall back
          debug: msg=fallback
    - name: Install done
      debug: msg=done
- name: Verify
  hosts: web
  gather_facts: false
  tasks:
    - name: Check
      debug: msg=checked
`)
	if err != nil || res.ExitCode != 0 || !res.OK() {
		t.Fatalf("err %v, rc %d, failed %v", err, res.ExitCode, res.FailedHosts)
	}
	if s := res.Stats["web-1"]; s.Rescued != 1 || s.Failures != 0 {
		t.Fatalf("web-1 stats %+v, want rescued 1, failures 0", s)
	}
	failed := c.sink.OfType(TypeTaskFailedOnHost)
	if len(failed) != 1 || failed[0].Severity != log.SeverityWarn || failed[0].Details["rescued"] != true ||
		failed[0].Details["hostName"] != "web-1" || failed[0].Details["taskName"] != "Try the fast path" {
		t.Fatalf("TaskFailedOnHost %v, want one WARN for web-1 marked rescued", failed)
	}
	// Settled live: web-1 ran the rescue task that web-2, which passed,
	// did not run; so before the next task, not at the recap.
	types := c.sink.Types()
	var at, next int
	for i, e := range c.sink.Events() {
		switch {
		case e.EventName == TypeTaskFailedOnHost:
			at = i
		case e.EventName == TypeTaskStarted && e.Details["taskName"] == "Install done":
			next = i
		}
	}
	if at > next {
		t.Errorf("the rescued failure was recorded after the next task started (event %d, Install done at %d)", at, next)
	}
	if n := len(c.sink.OfType(progress.TypeOperationCompleted)); n != 1 {
		t.Errorf("the run is not completed: %v", types)
	}

	st := newSpanTree(c.spans.Ended())
	assertSpan(t, st.hostSpan(t, "Try the fast path", "web-1"), codes.Unset, outcome.Rescued)
	assertSpan(t, st.hostSpan(t, "Try the fast path", "web-2"), codes.Unset, outcome.Skipped)
	assertSpan(t, st.only(t, "task Try the fast path"), codes.Unset, outcome.Rescued)
	// A parent says the most telling of its children (outcome.Of).
	assertSpan(t, st.only(t, "play Install"), codes.Unset, outcome.Rescued)
	for _, s := range st.spans {
		if s.Status().Code == codes.Error {
			t.Errorf("span %s has an error status: %v", s.Name(), s.Status())
		}
	}
	if s := st.byID[failed[0].SpanID]; s == nil || s.Name() != "host web-1" || st.parent(s).Name() != "task Try the fast path" {
		t.Errorf("the rescued failure is not recorded in its host span")
	}
	assertEnded(t, c)
}

// TestRunAlwaysFailureCounts: a block with an always section and no rescue
// runs its always tasks on the failed host, and the failure still counts:
// TaskFailedOnHost at ERROR without rescued, error spans, the run failed.
// It is settled as soon as the host skips a task the others run, before
// the run ends.
func TestRunAlwaysFailureCounts(t *testing.T) {
	c, _, res, err := runPlaybook(t, "always.yml", `- name: Upgrade
  hosts: web
  gather_facts: false
  tasks:
    - block:
        - name: Migrate
          command: /bin/false
          when: inventory_hostname == 'web-1'
      always:
        - name: Clean up
          debug: msg=cleanup
    - name: Restart
      debug: msg=restart
    - name: Report
      debug: msg=report
`)
	var exit *ExitError
	if !errors.As(err, &exit) || !slices.Equal(res.FailedHosts, []string{"web-1"}) {
		t.Fatalf("err %v, failed hosts %v; want web-1 failed", err, res.FailedHosts)
	}
	failed := c.sink.OfType(TypeTaskFailedOnHost)
	if len(failed) != 1 || failed[0].Severity != log.SeverityError || failed[0].Details["rescued"] != nil {
		t.Fatalf("TaskFailedOnHost %v, want one ERROR, not rescued", failed)
	}
	var at, report int
	for i, e := range c.sink.Events() {
		switch {
		case e.EventName == TypeTaskFailedOnHost:
			at = i
		case e.EventName == TypeTaskStarted && e.Details["taskName"] == "Report":
			report = i
		}
	}
	if at > report {
		t.Errorf("the failure was recorded after the next tasks started (event %d, Report at %d)", at, report)
	}
	st := newSpanTree(c.spans.Ended())
	assertSpan(t, st.hostSpan(t, "Migrate", "web-1"), codes.Error, outcome.Failed)
	assertSpan(t, st.only(t, "task Migrate"), codes.Error, outcome.Failed)
	assertSpan(t, st.only(t, "play Upgrade"), codes.Error, outcome.Failed)
	if len(st.named("host web-1")) != 2 { // Migrate and Clean up, nothing after
		t.Errorf("web-1 ran %d tasks, want 2", len(st.named("host web-1")))
	}
	assertEnded(t, c)
}

// TestRunIgnoredNoLog: a no_log loop whose items fail under ignore_errors
// stays ignored: every TaskFailedOnHost (items and result) is a WARN
// marked ignored, the host and task spans say ignored without an error
// status, and nothing counts as a failure.
func TestRunIgnoredNoLog(t *testing.T) {
	c, _, res, err := runPlaybook(t, "nolog.yml", `- name: Secrets
  hosts: web-1
  gather_facts: false
  tasks:
    - name: Try the secret keys
      command: /bin/false {{ item }}
      loop: [first-fake-key, second-fake-key]
      no_log: true
      ignore_errors: true
    - name: Go on
      debug: msg=on
`)
	if err != nil || !res.OK() || res.Stats["web-1"].Ignored != 1 || res.Stats["web-1"].Failures != 0 {
		t.Fatalf("err %v, stats %+v", err, res.Stats)
	}
	failed := c.sink.OfType(TypeTaskFailedOnHost)
	if len(failed) != 3 {
		t.Fatalf("%d TaskFailedOnHost, want 2 items and the result", len(failed))
	}
	for _, e := range failed {
		if e.Severity != log.SeverityWarn || e.Details["ignored"] != true {
			t.Errorf("TaskFailedOnHost %v %v, want WARN marked ignored", e.Severity, e.Details)
		}
		if msg, _ := e.Details["taskResult"].(map[string]any)["msg"].(string); !strings.Contains(msg, "no_log") {
			t.Errorf("no_log result not censored: %v", e.Details)
		}
	}
	st := newSpanTree(c.spans.Ended())
	assertSpan(t, st.hostSpan(t, "Try the secret keys", "web-1"), codes.Unset, outcome.Ignored)
	assertSpan(t, st.only(t, "task Try the secret keys"), codes.Unset, outcome.Ignored)
	// A parent says the most telling of its children (outcome.Of).
	assertSpan(t, st.only(t, "play Secrets"), codes.Unset, outcome.Ignored)
	assertEnded(t, c)
}

// TestRunFreeStrategy: under strategy free each host starts a task on its
// own, so Ansible repeats the task's start: it is one task, one span and
// one TaskStarted, with every host's span under it, and nothing stays
// open.
func TestRunFreeStrategy(t *testing.T) {
	c, _, res, err := runPlaybook(t, "free.yml", `- name: Free
  hosts: web:lb
  gather_facts: false
  strategy: free
  tasks:
    - name: Slow on some
      command: "sleep {{ {'web-1': 2, 'web-2': 0, 'lb-1': 1}[inventory_hostname] }}"
    - name: Second
      debug: msg=two
    - name: Third
      command: "true"
`)
	if err != nil || !res.OK() {
		t.Fatalf("err %v", err)
	}
	started := startedTasks(c)
	for _, task := range []string{"Slow on some", "Second", "Third"} {
		if started[task] != 1 {
			t.Errorf("TaskStarted %q %d times, want once", task, started[task])
		}
	}
	st := newSpanTree(c.spans.Ended())
	for _, task := range []string{"Slow on some", "Second", "Third"} {
		ts := st.only(t, "task "+task)
		var hosts []string
		for _, s := range st.children(ts) {
			hosts = append(hosts, s.Name())
			if s.EndTime().After(ts.EndTime()) || s.StartTime().Before(ts.StartTime()) {
				t.Errorf("%s of task %s outside its task", s.Name(), task)
			}
		}
		slices.Sort(hosts)
		if want := []string{"host lb-1", "host web-1", "host web-2"}; !slices.Equal(hosts, want) {
			t.Errorf("task %s hosts %v, want %v", task, hosts, want)
		}
	}
	// Each host event lands in its own task's host span.
	for _, e := range c.sink.Events() {
		if e.EventName != TypeTaskCompletedOnHost && e.EventName != TypeTaskStartedOnHost {
			continue
		}
		s := st.byID[e.SpanID]
		if s == nil || s.Name() != "host "+e.Details["hostName"].(string) || st.parent(s).Name() != "task "+e.Details["taskName"].(string) {
			t.Errorf("%s of %v on %v recorded in the wrong span", e.EventName, e.Details["taskName"], e.Details["hostName"])
		}
	}
	assertEnded(t, c)
}

// TestRunFlushHandlers: meta: flush_handlers makes no task span of its
// own (it has no host): every task span has hosts, the handler's among
// them.
func TestRunFlushHandlers(t *testing.T) {
	c, _, _, err := runPlaybook(t, "flush.yml", `- name: Handlers
  hosts: web-1
  gather_facts: false
  tasks:
    - name: Change
      command: "true"
      notify: Reload
    - meta: flush_handlers
    - name: After
      debug: msg=after
    - meta: flush_handlers
  handlers:
    - name: Reload
      debug: msg=reload
`)
	if err != nil {
		t.Fatal(err)
	}
	st := newSpanTree(c.spans.Ended())
	var tasks []string
	for _, s := range st.spans {
		if !strings.HasPrefix(s.Name(), "task ") {
			continue
		}
		tasks = append(tasks, s.Name())
		if len(st.children(s)) == 0 {
			t.Errorf("task span %s has no host", s.Name())
		}
	}
	slices.Sort(tasks)
	if want := []string{"task After", "task Change", "task Handler/Reload"}; !slices.Equal(tasks, want) {
		t.Errorf("task spans %v, want %v", tasks, want)
	}
	assertEnded(t, c)
}

// TestRunMetaEndHost: meta: end_host, whose start Ansible repeats, and
// meta: end_play in a linear play: one TaskStarted per task, each task
// ends when the next starts (as under the linear strategy, not with the
// play), and the host that end_host ended runs nothing after it.
func TestRunMetaEndHost(t *testing.T) {
	c := newCapture(t)
	// When the span of task After ends, the last event recorded must be
	// its host's result: under the free strategy it would end with the
	// play, after the next task's start.
	var lastBeforeAfterEnded string
	c.tp.RegisterSpanProcessor(onSpanEnd(func(s sdktrace.ReadOnlySpan) {
		if evs := c.sink.Events(); s.Name() == "task After" && len(evs) > 0 {
			lastBeforeAfterEnded = evs[len(evs)-1].EventName
		}
	}))
	_, _, res, err := runPlaybookIn(t, c, "endhost.yml", `- name: Ends
  hosts: web
  gather_facts: false
  tasks:
    - name: Before
      debug: msg=before
    - meta: end_host
      when: inventory_hostname == 'web-2'
    - name: After
      debug: msg=after
    - meta: end_play
    - name: Never
      debug: msg=never
`)
	if err != nil || res.Stats["web-1"].OK != 2 {
		t.Fatalf("err %v, stats %+v", err, res.Stats)
	}
	started := startedTasks(c)
	if started["Before"] != 1 || started["After"] != 1 || started["Never"] != 0 {
		t.Errorf("TaskStarted %v", started)
	}
	st := newSpanTree(c.spans.Ended())
	before, after := st.only(t, "task Before"), st.only(t, "task After")
	if before.EndTime().After(after.StartTime()) {
		t.Errorf("task Before ends at %v, after task After started (%v): the play was taken for strategy free", before.EndTime(), after.StartTime())
	}
	if lastBeforeAfterEnded != TypeTaskCompletedOnHost {
		t.Errorf("task After ended after %s, not when the next task started", lastBeforeAfterEnded)
	}
	if hosts := st.children(after); len(hosts) != 1 || hosts[0].Name() != "host web-1" {
		t.Errorf("task After ran on %d hosts, want web-1 only", len(hosts))
	}
	assertEnded(t, c)
}

// TestRunLoadErrors: a playbook that is not valid YAML, and one that does
// not exist (ansible-runner run on it directly, its output decoded by
// Stream, as a driver with its own runner does): the failure says Ansible's
// real error, once, and the adapter logs no warning per line of Ansible's
// text.
func TestRunLoadErrors(t *testing.T) {
	t.Run("yaml", func(t *testing.T) {
		c, warnings, _, err := runPlaybook(t, "broken.yml", "- hosts: web\n  tasks: []\nfoo: bar\n")
		var pe *PlaybookError
		if !errors.As(err, &pe) || !strings.Contains(pe.Reason, "did not find expected '-' indicator") || !strings.Contains(pe.Reason, "line 3, column 1") {
			t.Fatalf("err = %v, want the YAML parser's error with its place", err)
		}
		desc := c.sink.OfType(progress.TypeOperationFailed)[0].Details["description"].(string)
		if !strings.Contains(desc, "did not find expected '-' indicator") || strings.Count(desc, "indicator") != 1 {
			t.Errorf("OperationFailed description %q", desc)
		}
		if w := warnings.String(); w != "" {
			t.Errorf("the adapter logged warnings for Ansible's text:\n%s", w)
		}
	})
	for _, tc := range []struct{ name, playbook, text, want string }{
		{"missing via Stream", "missing.yml", "", "the playbook: missing.yml could not be found"},
		{"yaml via Stream", "broken.yml", "- name: x\n  hosts: web\n  tasks:\n    - debug: msg=a\n   bad: [\n", "did not find expected key (line 4, column 17)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireAnsible(t)
			dir := t.TempDir()
			if tc.text != "" {
				if err := os.WriteFile(filepath.Join(dir, tc.playbook), []byte(tc.text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "ansible-runner", "run", t.TempDir(), "--json", "--project-dir", dir,
				"--playbook", tc.playbook, "--inventory", inventory(t))
			cmd.Env = append(os.Environ(), "ANSIBLE_NOCOLOR=True")
			out, _ := cmd.Output()
			var warnings testutil.SyncBuffer
			c := newCapture(t)
			_, err := Stream(context.Background(), bytes.NewReader(out),
				append(c.options(t), adapter.WithLogger(slog.New(slog.NewTextHandler(&warnings, &slog.HandlerOptions{Level: slog.LevelWarn}))))...)
			if !errors.Is(err, ErrNoEvents) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrNoEvents saying %q\noutput:\n%s", err, tc.want, out)
			}
			assertOnlyStartFail(t, c, "no Ansible job event was read: "+errorLine(cleanText(string(out), 1<<20)))
			if desc := c.sink.OfType(progress.TypeOperationFailed)[0].Details["description"].(string); !strings.Contains(desc, tc.want) {
				t.Errorf("OperationFailed description %q lacks %q", desc, tc.want)
			}
			if w := warnings.String(); w != "" {
				t.Errorf("the adapter logged warnings for Ansible's text:\n%s", w)
			}
		})
	}
}

// onSpanEnd calls f for every span that ends, synchronously.
type onSpanEnd func(s sdktrace.ReadOnlySpan)

func (f onSpanEnd) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (f onSpanEnd) OnEnd(s sdktrace.ReadOnlySpan)                   { f(s) }
func (f onSpanEnd) Shutdown(context.Context) error                  { return nil }
func (f onSpanEnd) ForceFlush(context.Context) error                { return nil }
