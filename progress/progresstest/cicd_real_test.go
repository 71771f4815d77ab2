package progresstest_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/ansible"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/terraform"
)

// These tests run the real tools (ansible-runner, bin/tofu) under the
// CI/CD conventions (OTEL_SEMCONV_STABILITY_OPT_IN=cicd/dup) and check
// their spans with CheckCICDSpans: what a driver author's test does.

func record(t *testing.T, more ...sdktrace.SpanProcessor) (*tracetest.SpanRecorder, *sdktrace.TracerProvider) {
	t.Setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "cicd/dup")
	sr := tracetest.NewSpanRecorder()
	opts := []sdktrace.TracerProviderOption{sdktrace.WithSpanProcessor(sr)}
	for _, p := range more {
		opts = append(opts, sdktrace.WithSpanProcessor(p))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return sr, tp
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func value(s sdktrace.ReadOnlySpan, key string) string {
	if s == nil { // a missing span fails its check, not the test binary
		return ""
	}
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}

// byName is the spans by name; the last one wins.
func byName(spans []sdktrace.ReadOnlySpan) map[string]sdktrace.ReadOnlySpan {
	m := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		m[s.Name()] = s
	}
	return m
}

const playbook = `
- name: Conventions
  hosts: all
  gather_facts: false
  tasks:
    - name: Change something
      ansible.builtin.command: "true"
    - name: Skip it
      ansible.builtin.command: "true"
      when: false
    - name: Fail and go on
      ansible.builtin.command: "false"
      ignore_errors: true
    - name: Loop
      ansible.builtin.debug:
        msg: "{{ item }}"
      loop: [a, b]
`

func ansibleRun(t *testing.T, playbookText string, opts ...ansible.Option) ([]sdktrace.ReadOnlySpan, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	return ansibleRunCtx(t, ctx, playbookText, opts...)
}

func ansibleRunCtx(t *testing.T, ctx context.Context, playbookText string, opts ...ansible.Option) ([]sdktrace.ReadOnlySpan, error) {
	t.Helper()
	return ansibleRunWith(t, ctx, nil, playbookText, opts...)
}

// ansibleRunWith runs the playbook with more span processors.
func ansibleRunWith(t *testing.T, ctx context.Context, more []sdktrace.SpanProcessor, playbookText string, opts ...ansible.Option) ([]sdktrace.ReadOnlySpan, error) {
	t.Helper()
	for _, tool := range []string{"ansible-runner", "ansible-playbook"} {
		testutil.RequireTool(t, tool, "apt-get install --no-install-recommends ansible-core python3-ansible-runner")
	}
	sr, tp := record(t, more...)
	dir := t.TempDir()
	write(t, dir, "site.yml", playbookText)
	write(t, dir, "hosts", "[web]\nweb-1 ansible_connection=local ansible_python_interpreter=/usr/bin/python3\nweb-2 ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n")
	_, err := ansible.Run(ctx, ansible.Playbook{ProjectDir: dir, Playbook: "site.yml", Inventory: filepath.Join(dir, "hosts")},
		append([]ansible.Option{adapter.WithRecorder(progresstest.NewSink().Recorder()), adapter.WithTracerProvider(tp)}, opts...)...)
	return sr.Ended(), err
}

func TestAnsibleRunConforms(t *testing.T) {
	spans, err := ansibleRun(t, playbook)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	progresstest.CheckCICDSpans(t, spans)
	m := byName(spans)
	run := m["RUN site.yml"]
	if run == nil || value(run, "cicd.pipeline.result") != "success" {
		t.Fatalf("no run span RUN site.yml with result success: %v", m)
	}
	for name, want := range map[string]string{
		"task Change something": "success", "task Skip it": "skip", "task Fail and go on": "failure", "task Loop": "success",
	} {
		s := m[name]
		if s == nil || value(s, "cicd.pipeline.task.run.result") != want || value(s, "cicd.pipeline.task.type") != "deploy" {
			t.Errorf("%s: result %q, want %q", name, value(s, "cicd.pipeline.task.run.result"), want)
		}
	}
	if got := value(m["task Fail and go on"], "progress.outcome"); got != "ignored" {
		t.Errorf("the ignored failure: progress.outcome %q", got)
	}
}

func TestAnsibleFailedRunConforms(t *testing.T) {
	spans, err := ansibleRun(t, `
- hosts: all
  gather_facts: false
  tasks:
    - name: Break
      ansible.builtin.command: "false"
`)
	var exit *ansible.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("Run: %v, want an *ExitError", err)
	}
	progresstest.CheckCICDSpans(t, spans)
	run := byName(spans)["RUN site.yml"]
	if run == nil || value(run, "cicd.pipeline.result") != "failure" || value(run, "error.type") != progress.FailureInfrastructure {
		t.Errorf("run: result %q error.type %q", value(run, "cicd.pipeline.result"), value(run, "error.type"))
	}
}

// TestAnsiblePromptIsAFailure: a vars_prompt that nothing answers fails
// the run (Run stops it at once: it does not wait, and was not cancelled),
// with one name everywhere: failure, failed.
func TestAnsiblePromptIsAFailure(t *testing.T) {
	spans, err := ansibleRun(t, `
- hosts: all
  gather_facts: false
  vars_prompt:
    - name: release
      prompt: Which release?
  tasks:
    - ansible.builtin.debug: {msg: "{{ release }}"}
`)
	var prompt *ansible.VarsPromptError
	if !errors.As(err, &prompt) {
		t.Fatalf("Run: %v, want a *VarsPromptError", err)
	}
	progresstest.CheckCICDSpans(t, spans)
	run := byName(spans)["RUN site.yml"]
	if run == nil || value(run, "cicd.pipeline.result") != "failure" || value(run, "progress.outcome") != "failed" {
		t.Errorf("run: result %q", value(run, "cicd.pipeline.result"))
	}
}

const tofuConfig = `
resource "terraform_data" "web" {
  count = 2
  input = "web-${count.index}"
}
resource "terraform_data" "broken" {
  count = var.fail ? 1 : 0
  provisioner "local-exec" {
    command = "exit 3"
  }
}
variable "fail" {
  type    = bool
  default = false
}
`

func tofuApply(t *testing.T, fail bool, opts ...terraform.Option) ([]sdktrace.ReadOnlySpan, error) {
	t.Helper()
	bin := testutil.Tofu(t)
	sr, tp := record(t)
	dir := t.TempDir()
	write(t, dir, "main.tf", tofuConfig)
	rc := filepath.Join(t.TempDir(), "empty.tfrc")
	write(t, filepath.Dir(rc), "empty.tfrc", "")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err := terraform.Run(ctx, terraform.Command{Binary: bin, Dir: dir, Args: []string{"apply"}, Init: true,
		Vars: map[string]any{"fail": fail},
		Env:  []string{"TF_CLI_CONFIG_FILE=" + rc, "CHECKPOINT_DISABLE=1", "HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9"}},
		append([]terraform.Option{adapter.WithRecorder(progresstest.NewSink().Recorder()), adapter.WithTracerProvider(tp)}, opts...)...)
	return sr.Ended(), err
}

func TestTofuApplyConforms(t *testing.T) {
	spans, err := tofuApply(t, false, adapter.WithTaskURLTemplate("https://ui.example/runs/{run.id}/{task.id}"))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	progresstest.CheckCICDSpans(t, spans)
	run := byName(spans)["RUN apply"]
	if run == nil || value(run, "cicd.pipeline.result") != "success" {
		t.Fatalf("no run span RUN apply with result success")
	}
	tasks := 0
	for _, s := range spans {
		if s.Name() != "create terraform_data.web" {
			continue
		}
		tasks++
		if value(s, "cicd.pipeline.task.run.result") != "success" || value(s, "progress.outcome") != "changed" {
			t.Errorf("%s: result %q", s.Name(), value(s, "cicd.pipeline.task.run.result"))
		}
		want := "https://ui.example/runs/" + value(run, "cicd.pipeline.run.id") + "/terraform_data.web%5B"
		if u := value(s, "cicd.pipeline.task.run.url.full"); len(u) <= len(want) || u[:len(want)] != want {
			t.Errorf("task url %q, want it to start with %q", u, want)
		}
	}
	if tasks != 2 {
		t.Errorf("%d spans named create terraform_data.web, want 2 (one name for both instances)", tasks)
	}
}

func TestTofuFailedApplyConforms(t *testing.T) {
	spans, err := tofuApply(t, true)
	var opErr *terraform.OperationError
	if !errors.As(err, &opErr) {
		t.Fatalf("Run: %v, want an *OperationError", err)
	}
	progresstest.CheckCICDSpans(t, spans)
	m := byName(spans)
	run := m["RUN apply"]
	if run == nil || value(run, "cicd.pipeline.result") != "failure" || value(run, "error.type") != progress.FailureInfrastructure {
		t.Errorf("run: result %q error.type %q", value(run, "cicd.pipeline.result"), value(run, "error.type"))
	}
	if s := m["create terraform_data.broken"]; s == nil || value(s, "cicd.pipeline.task.run.result") != "failure" ||
		value(s, "error.type") != "failed" {
		t.Errorf("the errored task: %v", s)
	}
}

// TestAnsibleStoppedRunConforms: a run whose context is cancelled ends
// with cancellation; one whose deadline passes, with timeout.
func TestAnsibleStoppedRunConforms(t *testing.T) {
	const sleep = `
- hosts: web-1
  gather_facts: false
  tasks:
    - name: Wait
      ansible.builtin.command: sleep 60
`
	for _, tc := range []struct {
		result, outcome string
		ctx             func() (context.Context, context.CancelFunc, []sdktrace.SpanProcessor)
	}{
		{"cancellation", "cancelled", func() (context.Context, context.CancelFunc, []sdktrace.SpanProcessor) {
			// Cancelled once the host runs the task.
			ctx, cancel := context.WithCancel(context.Background())
			return ctx, cancel, []sdktrace.SpanProcessor{onStart{"host web-1", cancel}}
		}},
		{"timeout", "timeout", func() (context.Context, context.CancelFunc, []sdktrace.SpanProcessor) {
			// Long enough for the task to start on a loaded machine.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			return ctx, cancel, nil
		}},
	} {
		t.Run(tc.result, func(t *testing.T) {
			ctx, cancel, more := tc.ctx()
			defer cancel()
			spans, err := ansibleRunWith(t, ctx, more, sleep)
			if err == nil {
				t.Fatal("Run: no error, want the run stopped")
			}
			progresstest.CheckCICDSpans(t, spans)
			run := byName(spans)["RUN site.yml"]
			if run == nil || value(run, "cicd.pipeline.result") != tc.result || value(run, "progress.outcome") != tc.outcome {
				t.Errorf("run: result %q outcome %q, want %s %s", value(run, "cicd.pipeline.result"), value(run, "progress.outcome"), tc.result, tc.outcome)
			}
			// The task the host was running when the run stopped.
			// error.type for a failure that counts: a time limit, not a
			// cancel (stopped, not failed).
			errType := tc.outcome
			if tc.outcome == "cancelled" {
				errType = ""
			}
			if task := byName(spans)["task Wait"]; task == nil || value(task, "cicd.pipeline.task.run.result") != tc.result ||
				value(task, "progress.outcome") != tc.outcome || value(task, "error.type") != errType {
				t.Errorf("task Wait: result %q outcome %q", value(task, "cicd.pipeline.task.run.result"), value(task, "progress.outcome"))
			}
		})
	}
}

// onStart calls do when a span of the name starts.
type onStart struct {
	name string
	do   func()
}

func (p onStart) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) {
	if s.Name() == p.name {
		p.do()
	}
}
func (onStart) OnEnd(sdktrace.ReadOnlySpan)      {}
func (onStart) Shutdown(context.Context) error   { return nil }
func (onStart) ForceFlush(context.Context) error { return nil }
