package otelbridge

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"

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

// TestTelemetryOutput: without the live view, the program's text goes to
// stderr; a nil Telemetry answers too.
func TestTelemetryOutput(t *testing.T) {
	var tel *Telemetry
	if tel.Output() != os.Stderr {
		t.Error("nil Telemetry: Output is not os.Stderr")
	}
	tel, err := Setup(context.Background(), WithExporters("json"), WithWriter(&testutil.SyncBuffer{}), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	if tel.Output() != os.Stderr {
		t.Error("json exporter: Output is not os.Stderr")
	}
}
