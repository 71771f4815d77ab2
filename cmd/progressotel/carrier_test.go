package main_test

import (
	"bytes"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/progressotel/progressotel/internal/testkit/otlptest"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
)

// otelCLI returns otel-cli, built into the repository's bin/ by make
// otel-cli (scripts/build-otel-cli.sh), or $OTEL_CLI_BIN; under CI=true a
// missing one fails the test.
func otelCLI(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("OTEL_CLI_BIN")
	if bin == "" {
		bin = filepath.Join(testutil.RepoRoot(t), "bin", "otel-cli")
	}
	return testutil.RequireTool(t, bin, "make otel-cli builds it")
}

// spanNamed returns the span called name among spans, failing the test
// when there is none.
func spanNamed(t *testing.T, spans []otlptest.ReceivedSpan, name string) *tracepb.Span {
	t.Helper()
	for _, s := range spans {
		if s.Span.GetName() == name {
			return s.Span
		}
	}
	var names []string
	for _, s := range spans {
		names = append(names, s.Span.GetName())
	}
	t.Fatalf("no span %q among %v", name, names)
	return nil
}

// waitSpans waits until the server has n spans.
func waitSpans(t *testing.T, srv *otlptest.HTTPServer, n int) []otlptest.ReceivedSpan {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if s := srv.ReceivedSpans(); len(s) >= n {
			return s
		}
	}
	t.Fatalf("the OTLP endpoint got %d spans, want %d", len(srv.ReceivedSpans()), n)
	return nil
}

// The environment-variable carrier with a real peer, both ways, through a
// real OTLP endpoint: otel-cli as the command of progressotel run reads
// TRACEPARENT and makes its span a child of the run's operation; and
// progressotel run under otel-cli exec makes its span a child of
// otel-cli's.
func TestEnvCarrierInteropWithOtelCLI(t *testing.T) {
	oc := otelCLI(t)
	srv := otlptest.StartHTTP(t)
	env := []string{"OTEL_LOGS_EXPORTER=none", "OTEL_EXPORTER_OTLP_ENDPOINT=http://" + srv.Addr,
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_CLI_SERVICE_NAME=otel-cli"}

	t.Run("otel-cli under progressotel run", func(t *testing.T) {
		before := len(srv.ReceivedSpans())
		stdout, stderr := runClean(t, env, "run", "--operation", "Deploy", "--", oc, "span", "--name", "otel-cli child")
		if stdout != "" {
			t.Fatalf("stdout %q\n%s", stdout, stderr)
		}
		spans := waitSpans(t, srv, before+3)[before:]
		child := spanNamed(t, spans, "otel-cli child")
		op := spanNamed(t, spans, "Deploy")
		run := spanNamed(t, spans, "otel-cli")
		if !bytes.Equal(child.GetTraceId(), run.GetTraceId()) || !bytes.Equal(child.GetParentSpanId(), op.GetSpanId()) ||
			!bytes.Equal(op.GetParentSpanId(), run.GetSpanId()) {
			t.Fatalf("otel-cli's span (trace %s parent %s) is not under the run's operation (trace %s span %s)",
				hex.EncodeToString(child.GetTraceId()), hex.EncodeToString(child.GetParentSpanId()),
				hex.EncodeToString(op.GetTraceId()), hex.EncodeToString(op.GetSpanId()))
		}
	})

	t.Run("progressotel run under otel-cli exec", func(t *testing.T) {
		before := len(srv.ReceivedSpans())
		po := filepath.Join(binDir, "progressotel")
		cmd := exec.Command(oc, "exec", "--name", "otel-cli parent", "--", po, "run", "--", "true")
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("otel-cli exec: %v\n%s", err, out)
		}
		spans := waitSpans(t, srv, before+3)[before:]
		parent := spanNamed(t, spans, "otel-cli parent")
		var run *tracepb.Span
		for _, s := range spans {
			if s.Span.GetKind() == tracepb.Span_SPAN_KIND_CLIENT && s.Span.GetName() == "true" {
				run = s.Span
			}
		}
		if run == nil {
			t.Fatal("no run span")
		}
		if !bytes.Equal(run.GetTraceId(), parent.GetTraceId()) || !bytes.Equal(run.GetParentSpanId(), parent.GetSpanId()) {
			t.Fatalf("the run's span (trace %s parent %s) is not under otel-cli's (trace %s span %s)",
				hex.EncodeToString(run.GetTraceId()), hex.EncodeToString(run.GetParentSpanId()),
				hex.EncodeToString(parent.GetTraceId()), hex.EncodeToString(parent.GetSpanId()))
		}
	})
}
