package otelbridge

import (
	"context"
	"errors"
	"log"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/progress"
)

// TestSetupLiveRoutesTerminal: while the live view runs, the log package's default logger, slog's
// default handler and the OpenTelemetry error handler write through the view, in order with its
// own lines; Shutdown gives the log package its writer back.
func TestSetupLiveRoutesTerminal(t *testing.T) {
	var before testutil.SyncBuffer
	prev := log.Writer()
	log.SetOutput(&before)
	t.Cleanup(func() { log.SetOutput(prev) })

	var out testutil.SyncBuffer
	tel, err := Setup(context.Background(), WithWriter(&out), env(map[string]string{"OTEL_LOGS_EXPORTER": "live"}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, span := otel.Tracer("test").Start(context.Background(), "op")
	if err := progress.Record(ctx, progress.OperationStarted("Install")); err != nil {
		t.Fatal(err)
	}
	log.Print("from the log package")
	slog.Info("from slog's default handler")
	otel.Handle(errors.New("an export failed"))
	if err := progress.Record(ctx, progress.OperationCompleted("Install", 0)); err != nil {
		t.Fatal(err)
	}
	span.End()
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if log.Writer() != &before {
		t.Errorf("after Shutdown the log package writes to %T, not its previous writer", log.Writer())
	}
	log.Print("after the view")
	got := out.String()
	var order []int
	for _, want := range []string{"common/OperationStarted", "from the log package", "from slog's default handler", "an export failed", "common/OperationCompleted"} {
		i := strings.Index(got, want)
		if i < 0 {
			t.Fatalf("%q did not go through the live view:\n%s\n(the log package's writer got %q)", want, got, before.String())
		}
		order = append(order, i)
	}
	for i := 1; i < len(order); i++ {
		if order[i] < order[i-1] {
			t.Errorf("out of order:\n%s", got)
		}
	}
	if b := before.String(); strings.Contains(b, "from") || strings.Contains(b, "failed") || !strings.Contains(b, "after the view") {
		t.Errorf("the log package's own writer got %q", b)
	}
}
