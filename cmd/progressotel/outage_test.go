package main_test

import (
	"bytes"
	"net"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/progressotel/progressotel/internal/testkit/otlptest"
)

// A real OTLP/HTTP endpoint gets the run's events, the emits' among them,
// its span and its metrics.
func TestRunExportsEventsAndSpanOverOTLP(t *testing.T) {
	srv := otlptest.StartHTTP(t)
	r := runPO(t, []string{"OTEL_LOGS_EXPORTER=", "OTEL_EXPORTER_OTLP_ENDPOINT=http://" + srv.Addr},
		"run", "--operation", "Install", "--", "sh", "-c", "progressotel emit --type demo/Step && progressotel transition --stream lifecycle --status True --reason Running")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	want := []string{"common/OperationStarted", "demo/Step", "lifecycle", "common/OperationCompleted"}
	if got := srv.LogEventNames(); !slices.Equal(got, want) {
		t.Fatalf("collector got %v, want %v", got, want)
	}
	if r.stderr != "" {
		t.Fatalf("stderr: %s", r.stderr)
	}
	spans := srv.ReceivedSpans()
	if len(spans) != 2 {
		t.Fatalf("collector got %d spans, want the run's and its operation's", len(spans))
	}
	cli, op := spans[0], spans[1]
	if cli.Span.GetParentSpanId() != nil {
		cli, op = op, cli
	}
	if !bytes.Equal(op.Span.GetParentSpanId(), cli.Span.GetSpanId()) {
		t.Fatalf("the operation's span %q is not a child of the run's %q", op.Span.GetName(), cli.Span.GetName())
	}
	assertCLISpan(t, cli, "sh", 0)
	// The run's metrics go to the same endpoint, as to a collector.
	if names := srv.MetricNames(); !slices.Contains(names, "cicd.pipeline.run.duration") {
		t.Errorf("collector got metrics %v, want cicd.pipeline.run.duration", names)
	}
}

// assertCLISpan checks the span of `progressotel run` against the CLI
// semantic conventions (docs/cli/cli-spans.md): kind CLIENT, named after
// the executable, process.executable.name, process.exit.code,
// process.pid, error.type when the exit code is not 0, and no command
// arguments (they are opt-in).
func assertCLISpan(t *testing.T, s otlptest.ReceivedSpan, executable string, exitCode int) {
	t.Helper()
	if s.Span.GetKind() != tracepb.Span_SPAN_KIND_CLIENT || s.Span.GetName() != executable {
		t.Errorf("span %q kind %v, want %q CLIENT", s.Span.GetName(), s.Span.GetKind(), executable)
	}
	if v, _ := s.Attr("process.executable.name"); v != executable {
		t.Errorf("process.executable.name %q", v)
	}
	if v, ok := s.Attr("process.exit.code"); !ok || v != strconv.Itoa(exitCode) {
		t.Errorf("process.exit.code %q, want %d", v, exitCode)
	}
	if v, ok := s.Attr("process.pid"); !ok || v == "0" {
		t.Errorf("process.pid %q", v)
	}
	if v, ok := s.Attr("error.type"); (exitCode != 0) != ok || ok && v != strconv.Itoa(exitCode) {
		t.Errorf("error.type %q (set: %v) for exit code %d", v, ok, exitCode)
	}
	if v, ok := s.Attr("process.command_args"); ok {
		t.Errorf("process.command_args recorded by default: %q", v)
	}
}

// A failing command: error.type on the run's span; --record-args records
// the command line, redacted first.
func TestRunSpanOfAFailingCommandWithItsArguments(t *testing.T) {
	srv := otlptest.StartHTTP(t)
	r := runPO(t, []string{"OTEL_LOGS_EXPORTER=none", "OTEL_EXPORTER_OTLP_ENDPOINT=http://" + srv.Addr},
		"run", "--record-args", "--", "sh", "-c", "exit 3", "--password", "hunter2", "--token=abc123", "plain")
	if r.code != 3 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var cli *otlptest.ReceivedSpan
	for _, s := range srv.ReceivedSpans() {
		if s.Span.GetKind() == tracepb.Span_SPAN_KIND_CLIENT {
			cli = &s
		}
	}
	if cli == nil {
		t.Fatal("no CLIENT span")
	}
	if v, _ := cli.Attr("error.type"); v != "3" {
		t.Errorf("error.type %q, want 3", v)
	}
	args, _ := cli.Attr("process.command_args")
	if strings.Contains(args, "hunter2") || strings.Contains(args, "abc123") || !strings.Contains(args, "exit 3") || !strings.Contains(args, "plain") {
		t.Errorf("process.command_args %q: want the command line with its secrets redacted", args)
	}
}

// closedPort returns an address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// A collector that is down or that hangs never changes the exit status,
// and delays the exit by --shutdown-timeout at most: the exporter's own
// timeout is ten minutes here, so waiting for it would fail the test.
func TestCollectorOutageNeverChangesTheStatus(t *testing.T) {
	hanging := otlptest.StartHTTP(t)
	hanging.Hold()
	t.Cleanup(hanging.Release)
	for name, endpoint := range map[string]string{
		"down":    "http://" + closedPort(t),
		"hanging": "http://" + hanging.Addr,
	} {
		t.Run(name, func(t *testing.T) {
			env := []string{"OTEL_LOGS_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT=" + endpoint,
				"OTEL_EXPORTER_OTLP_TIMEOUT=600000", "OTEL_BLRP_SCHEDULE_DELAY=10"}
			p := start(t, env, "run", "--shutdown-timeout", "1s", "--", "sh", "-c",
				`i=0; while [ $i -lt 20 ]; do progressotel emit --type demo/Step || exit 90; i=$((i+1)); done; exit 5`)
			r := p.wait(time.Minute)
			if r.code != 5 || r.signal != 0 {
				t.Fatalf("exit %d signal %v, want the command's 5\n%s", r.code, r.signal, r.stderr)
			}
			if !strings.Contains(r.stderr, "records lost") {
				t.Fatalf("the loss is not reported: %s", r.stderr)
			}

			// An emit outside a run: exit 0, bounded the same way.
			p = start(t, env, "emit", "--shutdown-timeout", "1s", "--type", "demo/Step")
			r = p.wait(time.Minute)
			if r.code != 0 || !strings.Contains(r.stderr, "records lost") {
				t.Fatalf("emit: exit %d\n%s", r.code, r.stderr)
			}
		})
	}
}

// A signal that arrives while the telemetry is being flushed, after the
// command has exited, cuts the flush short: progressotel exits at once
// with the command's status.
func TestSignalDuringShutdownKeepsTheStatus(t *testing.T) {
	hanging := otlptest.StartHTTP(t)
	hanging.Hold()
	t.Cleanup(hanging.Release)
	done := t.TempDir() + "/done"
	p := start(t, []string{"OTEL_LOGS_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT=http://" + hanging.Addr, "OTEL_EXPORTER_OTLP_TIMEOUT=600000"},
		"run", "--shutdown-timeout", "10m", "--", "sh", "-c", "touch "+done+"; exit 3")
	waitFile(t, done)
	time.Sleep(200 * time.Millisecond) // let the command exit and the flush start
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r := p.wait(time.Minute)
	if r.code != 3 || r.signal != 0 {
		t.Fatalf("exit %d signal %v, want the command's 3\n%s", r.code, r.signal, r.stderr)
	}
}
