package otelbridge_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/otelbridge/internal/shutdown"
	"github.com/progressotel/progressotel/progress"
)

// stuckExporter ignores cancellation: every Export waits until released.
type stuckExporter struct {
	started chan struct{}
	release chan struct{}
}

func (e *stuckExporter) Export(context.Context, []sdklog.Record) error {
	select {
	case e.started <- struct{}{}:
	default:
	}
	<-e.release
	return nil
}
func (e *stuckExporter) Shutdown(context.Context) error   { return nil }
func (e *stuckExporter) ForceFlush(context.Context) error { return nil }

// TestTelemetryShutdownDeadlineWithStuckExporters: Telemetry.Shutdown
// returns at its deadline with three exporters that ignore cancellation
// (it took a grace of 0.5 s per exporter past it). The measure is the
// overrun past the deadline, against one shutdown.CancelGrace.
func TestTelemetryShutdownDeadlineWithStuckExporters(t *testing.T) {
	restoreGlobals(t)
	opts := []otelbridge.Option{otelbridge.WithExporters(), otelbridge.WithoutGlobalPropagator()}
	var exps []*stuckExporter
	for range 3 {
		e := &stuckExporter{started: make(chan struct{}, 1), release: make(chan struct{})}
		exps = append(exps, e)
		opts = append(opts, otelbridge.WithExporter(e))
	}
	tel, err := otelbridge.Setup(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, span := otel.Tracer("test").Start(context.Background(), "op")
	if err := progress.Record(ctx, progress.Progress(1, 2, "steps")); err != nil {
		t.Fatal(err)
	}
	span.End()
	go tel.ForceFlush(context.Background()) // starts the exports, which never end
	for _, e := range exps {
		<-e.started
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	deadline, _ := sctx.Deadline()
	err = tel.Shutdown(sctx)
	returned := time.Now()
	for _, e := range exps {
		close(e.release)
	}
	if err == nil {
		t.Error("Shutdown = nil, want the records lost to the stuck exporters")
	}
	if over := returned.Sub(deadline); over >= shutdown.CancelGrace {
		t.Errorf("Shutdown returned %v after its deadline, want well under %v", over, shutdown.CancelGrace)
	}
}
