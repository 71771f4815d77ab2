package otelbridge

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/progress"
)

// TestSetupLive: OTEL_LOGS_EXPORTER=live on a writer that is not a
// terminal writes the live view's plain lines, and Telemetry.Output
// interleaves the program's own lines with them, whole, in order.
func TestSetupLive(t *testing.T) {
	var out testutil.SyncBuffer
	tel, err := Setup(context.Background(), WithWriter(&out), env(map[string]string{"OTEL_LOGS_EXPORTER": "live"}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, span := otel.Tracer("test").Start(context.Background(), "op")
	if err := progress.Record(ctx, progress.OperationStarted("Install")); err != nil {
		t.Fatal(err)
	}
	if err := tel.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(tel.Output(), "tool: PLAY [web]")
	if err := progress.Record(ctx, progress.OperationCompleted("Install", 0)); err != nil {
		t.Fatal(err)
	}
	span.End()
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	trace := span.SpanContext().TraceID().String()[:8]
	want := []string{"▸ Install  trace " + trace, "common/OperationStarted  operation=Install", "tool: PLAY [web]", "common/OperationCompleted  operation=Install"}
	if len(lines) != len(want) {
		t.Fatalf("lines:\n%s", out.String())
	}
	for i, l := range lines {
		if !strings.Contains(l, want[i]) {
			t.Errorf("line %d %q, want it to contain %q", i, l, want[i])
		}
	}
}

// TestTelemetryOutput: without the live view or json, the program's text
// goes to stderr; a nil Telemetry answers too (json: TestJSONOutputStaysParseable).
func TestTelemetryOutput(t *testing.T) {
	var tel *Telemetry
	if tel.Output() != os.Stderr {
		t.Error("nil Telemetry: Output is not os.Stderr")
	}
	tel, err := Setup(context.Background(), WithExporters("console"), WithWriter(&testutil.SyncBuffer{}), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	if tel.Output() != os.Stderr {
		t.Error("console exporter: Output is not os.Stderr")
	}
}

// TestSetupPrettyInOrder: the pretty format, like the live view, takes
// each record as it is emitted, so that the lines come out in the order
// things happened: an event, the program's own line written to Output
// just after it, the next event. (Batched, the events came out up to
// 100 ms later than the program's line.)
func TestSetupPrettyInOrder(t *testing.T) {
	var out testutil.SyncBuffer
	tel, err := Setup(context.Background(), WithWriter(&out), env(map[string]string{"OTEL_LOGS_EXPORTER": "pretty"}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 3 {
		if err := progress.Record(ctx, progress.Event{Type: "test/Step", Details: map[string]any{"n": i, "absent": nil}}); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(tel.Output(), "tool line %d\n", i)
	}
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("lines:\n%s", out.String())
	}
	for i, l := range lines {
		want := fmt.Sprintf("test/Step  n=%d", i/2)
		if i%2 == 1 {
			want = fmt.Sprintf("tool line %d", i/2)
		}
		if !strings.Contains(l, want) {
			t.Errorf("line %d %q, want %q", i, l, want)
		}
		if strings.Contains(l, "<nil>") || strings.Contains(l, "absent") {
			t.Errorf("line %d %q: an absent value printed", i, l)
		}
	}
}

// TestSetupLiveSpans: with the live view, a Go driver's own nested spans
// make its tree with no code for it: here off a terminal (plain lines),
// where the failure summary at the end names the failed span by its
// path and gives its status's description.
func TestSetupLiveSpans(t *testing.T) {
	var out testutil.SyncBuffer
	tel, err := Setup(context.Background(), WithWriter(&out), env(map[string]string{"OTEL_LOGS_EXPORTER": "live"}))
	if err != nil {
		t.Fatal(err)
	}
	tracer := otel.Tracer("driver")
	ctx, run := tracer.Start(context.Background(), "deploy")
	_ = progress.Record(ctx, progress.OperationStarted("Deploy"))
	sctx, step := tracer.Start(ctx, "boot the VM")
	_, sub := tracer.Start(sctx, "attach the volume")
	sub.SetStatus(codes.Error, "volume vol-7 is attached elsewhere")
	sub.End()
	step.SetStatus(codes.Error, "a sub-step failed")
	step.End()
	_ = progress.Record(ctx, progress.OperationFailed("Deploy", "INTERNAL_ERROR", "boot failed"))
	run.End()
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"common/OperationFailed", "✗ Deploy failed: 1 failure",
		"  ✗ boot the VM › attach the volume  failed\n      volume vol-7 is attached elsewhere",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
}
