package terraform

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log/noop"

	"github.com/progressotel/progressotel/adapter"
	outcomes "github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

func TestEventType(t *testing.T) {
	for in, want := range map[string]string{
		"apply_start":           TypeApplyStarted,
		"provision_progress":    TypeProvisionOutput,
		"refresh_complete":      TypeRefreshCompleted,
		"":                      TypeLog,
		"log":                   TypeLog,
		"test_run":              "terraform/TestRun",
		"init_output":           "terraform/InitOutput",
		"output":                "terraform/Output",
		"ephemeral_op_start":    "terraform/EphemeralOpStart",
		"list_v2":               "terraform/ListV2",
		"_x":                    TypeMessage,
		"x_":                    TypeMessage,
		"a__b":                  TypeMessage,
		"9lives":                TypeMessage,
		"Apply":                 TypeMessage,
		"apply-start":           TypeMessage,
		"ünicode":               TypeMessage,
		strings.Repeat("a", 65): TypeMessage,
	} {
		got := EventType(in)
		if got != want {
			t.Errorf("EventType(%q) = %q, want %q", in, got, want)
		}
		// Record refuses a type that breaks the naming rule.
		valid := progress.NewRecorder(progress.WithLoggerProvider(noop.NewLoggerProvider()))
		if err := valid.Record(context.Background(), progress.Event{Type: got}); err != nil {
			t.Errorf("EventType(%q) = %q is not a valid type: %v", in, got, err)
		}
	}
}

// Lines that are not messages never break the stream: they are skipped,
// counted and logged, and the messages around them are all reported.
func TestStreamSkipsWhatIsNotAMessage(t *testing.T) {
	big := strings.Repeat("x", 3<<20) // a 3 MiB output value: within the limit
	input := strings.Join([]string{
		"OpenTofu is starting (plain text before the first message)",
		`{"@level":"info","@message":"OpenTofu 1.10.10","@timestamp":"2026-01-01T00:00:00Z","type":"version","tofu":"1.10.10"}`,
		`{"@level":"info","@message":"truncated json`,
		`[1, 2, 3]`,
		`"a string"`,
		`{}`,
		"",
		`{"@level":"info","@message":"Outputs: 1","@timestamp":"2026-01-01T00:00:01Z","type":"outputs","outputs":{"blob":{"sensitive":false,"value":"` + big + `"}}}` + "\r",
		`{"@level":"info","@message":"something new","@timestamp":"2026-01-01T00:00:02Z","type":"brand_new_thing","hook":{"resource":{"addr":"x.y"},"action":"create"}}`,
		`{"@level":"info","@message":"no hook","@timestamp":"2026-01-01T00:00:02Z","type":"apply_start"}`,
		`{"@level":"warn","@message":"a warning log","@timestamp":"not a time"}`,
		`{"@level":"info","@message":"Apply complete!","@timestamp":"2026-01-01T00:00:03Z","type":"change_summary","changes":{"add":0,"change":0,"remove":0,"operation":"apply"}}`, // no newline at the end
	}, "\n")
	c := newCapture(t)
	var logs testutil.SyncBuffer
	res, err := Stream(context.Background(), strings.NewReader(input),
		c.opts(adapter.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))...)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if res.Messages != 6 || res.SkippedLines != 5 {
		t.Errorf("%d messages, %d skipped lines; want 6 and 5", res.Messages, res.SkippedLines)
	}
	want := []string{progress.TypeOperationStarted, TypeVersion, TypeOutputs, "terraform/BrandNewThing", TypeMessage, TypeLog,
		TypeChangeSummary, progress.TypeOperationCompleted}
	if got := c.sink.Types(); !slices.Equal(got, want) {
		t.Errorf("types\n got %v\nwant %v", got, want)
	}
	if v, _ := res.Outputs["blob"].Value.(string); len(v) != len(big) {
		t.Errorf("the big output value has %d bytes", len(v))
	}
	if !strings.Contains(logs.String(), "skipped a malformed message") || !strings.Contains(logs.String(), "skipped a line that is not a message") {
		t.Errorf("skipped lines were not logged:\n%s", logs.String())
	}
	generic := c.sink.OfType("terraform/BrandNewThing")[0].Details
	if generic["address"] != "x.y" || generic["action"] != "create" || generic["message"] != "something new" {
		t.Errorf("generic details %v", generic)
	}
	if msg := c.sink.OfType(TypeMessage)[0].Details; msg["type"] != "apply_start" {
		t.Errorf("a known type without its object: %v", msg)
	}
}

func TestStreamLineLimit(t *testing.T) {
	input := `{"type":"log","@message":"` + strings.Repeat("y", 5000) + `"}` + "\n" +
		`{"type":"log","@message":"short"}` + "\n" + applySummary + "\n"
	c := newCapture(t)
	res, err := Stream(context.Background(), strings.NewReader(input), c.opts(adapter.WithMaxLineBytes(1024))...)
	if err != nil || res.Messages != 2 || res.SkippedLines != 1 {
		t.Fatalf("err %v, %d messages, %d skipped", err, res.Messages, res.SkippedLines)
	}
	if got := c.sink.OfType(TypeLog)[0].Details["message"]; got != "short" {
		t.Errorf("message %q", got)
	}
}

// applySummary is the last message of an apply that did nothing.
const applySummary = `{"@level":"info","@message":"Apply complete! Resources: 0 added, 0 changed, 0 destroyed.","@timestamp":"2026-01-01T00:00:09Z","changes":{"add":0,"change":0,"import":0,"remove":0,"forget":0,"operation":"apply"},"type":"change_summary"}`

// A stream without a single message is a failure, said as such: in the
// error and in common/OperationFailed.
func TestStreamWithoutMessages(t *testing.T) {
	for name, in := range map[string]string{
		"empty":      "",
		"plain text": "Error: plain text only\n",
		"NUL bytes":  strings.Repeat("\x00", 300) + "\n\x00\x00",
		"not UI":     `{"terraform_version":"1.10.10","platform":"linux_amd64"}` + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			c := newCapture(t)
			res, err := Stream(context.Background(), strings.NewReader(in), c.opts()...)
			var opErr *OperationError
			if !errors.Is(err, ErrNoMessages) || !errors.As(err, &opErr) || res.OK() {
				t.Fatalf("err %v (%T), OK %v", err, err, res.OK())
			}
			if got := c.sink.Types(); !slices.Equal(got, []string{progress.TypeOperationStarted, progress.TypeOperationFailed}) {
				t.Fatalf("types %v", got)
			}
			failed := c.sink.OfType(progress.TypeOperationFailed)[0].Details
			if failed["failureCode"] != progress.FailureInternal || !strings.Contains(failed["description"].(string), "no machine-readable UI message") {
				t.Errorf("OperationFailed %v", failed)
			}
		})
	}
}

// A blocked read on a pipe is released when ctx is cancelled.
func TestStreamCancelReleasesABlockedRead(t *testing.T) {
	pr, pw := testutil.Pipe(t)
	if _, err := io.WriteString(pw, `{"type":"version","tofu":"1.10.10","@timestamp":"2026-01-01T00:00:00Z"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	c := newCapture(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var (
		res Result
		err error
	)
	go func() {
		defer close(done)
		res, err = Stream(ctx, pr, c.opts(adapter.WithOperation("Install"))...)
	}()
	waitFor(t, done, func() bool { return len(c.sink.OfType(TypeVersion)) == 1 })
	cancel()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Stream did not return")
	}
	var opErr *OperationError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &opErr) || res.Operation != "Install" {
		t.Fatalf("err %v, operation %q", err, res.Operation)
	}
	evs := c.sink.Events()
	if last := evs[len(evs)-1]; last.EventName != progress.TypeOperationFailed || last.Details["description"] != "cancelled" ||
		last.Details["operation"] != "Install" {
		t.Errorf("last event %s %v", last.EventName, last.Details)
	}
	// Stopped, not failed: cancelled, without an Error status.
	if s := only(t, c.spansNamed("terraform Install")); s.Status().Code == codes.Error || attr(s, outcomes.Key) != outcomes.Cancelled {
		t.Errorf("span status %+v, outcome %q", s.Status(), attr(s, outcomes.Key))
	}
}

// The envelope of WithEnvelope is on every event, and the values of
// WithSensitiveValues are nowhere.
func TestStreamEnvelopeAndSensitiveValues(t *testing.T) {
	in, err := os.ReadFile("testdata/streams/tofu-apply-failing.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	c := newCapture(t)
	env := progress.Envelope{Component: progress.Component{Name: "tf-driver", Version: "1.0"},
		Resource: progress.Resource{Type: "resource::net::1.0", ID: "net-1"}, Scope: map[string]string{"organization": "acme"}}
	res, err := Stream(context.Background(), bytes.NewReader(in), c.opts(adapter.WithEnvelope(env), WithSensitiveValues("about to fail"))...)
	if err == nil {
		t.Fatal("no error for a failed apply")
	}
	for _, e := range c.sink.Events() {
		if e.Component.Name != "tf-driver" || e.Resource.ID != "net-1" || e.Tenant != "acme" {
			t.Fatalf("%s without the envelope: %+v", e.EventName, e.Envelope)
		}
	}
	assertNoSecret(t, c, res, err, "about to fail")
}

func TestCommandArgs(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		varFile string
		want    string
	}{
		{[]string{"apply"}, "", "apply -json -input=false -auto-approve"},
		{[]string{"apply"}, "/v.json", "apply -json -input=false -auto-approve -var-file=/v.json"},
		{[]string{"apply", "tfplan"}, "", "apply -json -input=false -auto-approve tfplan"},
		{[]string{"plan", "-out=p", "-input=true"}, "/v.json", "plan -json -var-file=/v.json -out=p -input=true"},
		{[]string{"destroy", "--auto-approve", "-json"}, "", "destroy -input=false --auto-approve -json"},
		{[]string{"-chdir=infra", "init", "-upgrade"}, "/v.json", "-chdir=infra init -json -input=false -upgrade"},
		{[]string{"validate"}, "/v.json", "validate -json"},
	} {
		c := Command{Args: tc.args}
		global, sub, rest, err := c.split()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(args(global, sub, rest, tc.varFile), " "); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.args, got, tc.want)
		}
	}
	if _, _, _, err := (Command{Args: []string{"-chdir=x"}}).split(); err == nil {
		t.Error("no error without a subcommand")
	}
}

func TestRunErrors(t *testing.T) {
	c := newCapture(t)
	res, err := Run(context.Background(), Command{Binary: "/nonexistent/tofu", Args: []string{"apply"}}, c.opts()...)
	var opErr *OperationError
	if !errors.As(err, &opErr) || !errors.Is(err, os.ErrNotExist) || res.ExitCode != -1 {
		t.Errorf("missing binary: %v (%T), exit %d", err, err, res.ExitCode)
	}
	if evs := c.sink.Events(); len(evs) != 2 || evs[1].EventName != progress.TypeOperationFailed || evs[1].Details["failureCode"] != progress.FailureInternal {
		t.Errorf("events %v", names(evs))
	}

	t.Setenv("PATH", t.TempDir())
	if _, err := Run(context.Background(), Command{Args: []string{"plan"}}, newCapture(t).opts()...); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("no tool on PATH: %v", err)
	}
	if _, err := Run(context.Background(), Command{Binary: "/bin/true"}, newCapture(t).opts()...); err == nil ||
		!strings.Contains(err.Error(), "no subcommand") {
		t.Errorf("no subcommand: %v", err)
	}
}

// The variables file is private and gone after the run; sensitive values
// of any JSON shape are searched for.
func TestVarFileAndSensitiveStrings(t *testing.T) {
	dir := t.TempDir()
	c := Command{Vars: map[string]any{"a": 1, "b": "plain"}, SensitiveVars: map[string]any{"b": "s3cret"}}
	path, err := c.writeVarFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 || !strings.HasSuffix(path, ".tfvars.json") {
		t.Fatalf("var file %s: %v %v", path, st.Mode(), err)
	}
	if b, _ := os.ReadFile(path); string(b) != `{"a":1,"b":"s3cret"}` {
		t.Errorf("var file %s", b)
	}
	type creds struct {
		User string `json:"user"`
		Key  string `json:"key"`
	}
	got := sensitiveStrings(map[string]any{"x": []any{"one", 42, 1.5, true, creds{"u", "k3y-value"}}, "y": []string{"z"}}, nil)
	slices.Sort(got)
	if want := []string{"1.5", "42", "k3y-value", "one", "u", "z"}; !slices.Equal(got, want) {
		t.Errorf("sensitive strings %v, want %v", got, want)
	}
}

// Every line of the recorded streams takes the fast path: the fallback to
// encoding/json is for the unusual, not for what the tools write.
func TestFastPathReadsRealStreams(t *testing.T) {
	streams, _ := filepath.Glob(filepath.Join("testdata", "streams", "*.jsonl"))
	n := 0
	for _, p := range streams {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.TrimSpace(b), []byte{'\n'}) {
			var m message
			if !parseFast(line, &m) {
				t.Errorf("%s: the fast path gave up on %.200s", p, line)
			}
			n++
		}
	}
	if n < 100 {
		t.Fatalf("only %d lines", n)
	}
}

// A relative Binary is the caller's, not Command.Dir's.
func TestRunRelativeBinary(t *testing.T) {
	t.Chdir(t.TempDir())
	// A whole plan: its version, then its summary (a stream without its
	// final message fails even with status 0).
	script := "#!/bin/sh\necho '{\"@level\":\"info\",\"@message\":\"OpenTofu 9.9.9\",\"@timestamp\":\"2026-01-01T00:00:00Z\",\"type\":\"version\",\"tofu\":\"9.9.9\"}'\n" +
		"echo '{\"@level\":\"info\",\"@message\":\"Plan: 0 to add, 0 to change, 0 to destroy.\",\"@timestamp\":\"2026-01-01T00:00:01Z\",\"type\":\"change_summary\",\"changes\":{\"add\":0,\"change\":0,\"remove\":0,\"operation\":\"plan\"}}'\n"
	if err := os.WriteFile("fake-tofu", []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Command{Binary: "./fake-tofu", Dir: t.TempDir(), Args: []string{"plan"}}, newCapture(t).opts()...)
	if err != nil || res.Version != "9.9.9" || res.ExitCode != 0 {
		t.Fatalf("err %v, result %+v", err, res)
	}
}

// A tool that fails before it writes a message is reported with the reason
// from its stderr.
func TestRunFailureBeforeAnyMessage(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "tofu")
	script := "#!/bin/sh\necho 'There are some problems with the CLI configuration:' >&2\necho '│ Error: Invalid provider installation method' >&2\necho 'more detail, TOKEN=tok-4711 here' >&2\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c := newCapture(t)
	res, err := Run(context.Background(), Command{Binary: fake, Args: []string{"apply"}}, c.opts()...)
	var opErr *OperationError
	if !errors.As(err, &opErr) || res.ExitCode != 1 || res.OK() {
		t.Fatalf("err %v, exit %d", err, res.ExitCode)
	}
	if !strings.HasSuffix(err.Error(), "Error: Invalid provider installation method") {
		t.Errorf("error %q", err)
	}
	if strings.Contains(opErr.Stderr, "tok-4711") || !strings.Contains(opErr.Stderr, "TOKEN="+wire.Redacted) {
		t.Errorf("stderr %q", opErr.Stderr)
	}
	evs := c.sink.Events()
	if d := evs[len(evs)-1].Details; d["description"] != "exit status 1: Error: Invalid provider installation method" {
		t.Errorf("OperationFailed %v", d)
	}
}
