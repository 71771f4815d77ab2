package otelbridge_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/progressotel/progressotel/internal/testkit/otlptest"
	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
)

// exportingGoroutines returns the stacks of the goroutines that are inside
// an OTLP export, of logs or spans.
func exportingGoroutines() []string {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, mark := range []string{"otlploghttp.(*client).UploadLogs", "otlptracehttp.(*client).UploadTraces",
			"otlploggrpc.(*client).UploadLogs", "otlptracegrpc.(*client).UploadTraces",
			"sdkparts.(*BatchProcessor).export", "(*BatchProcessor).drain"} {
			if strings.Contains(g, mark) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// TestShutdownDeadlineWithAHangingCollector: logs and spans go over OTLP
// to a collector that accepts the requests and never answers, with the
// exporters' own timeouts far beyond the test. Shutdown returns at its
// deadline, with the loss in its error and in Stats, and no export of logs
// or spans is left running: the driver can exit, or carry on, knowing
// what it lost.
func TestShutdownDeadlineWithAHangingCollector(t *testing.T) {
	srv := otlptest.StartHTTP(t)
	otlpEnv(t, "http://"+srv.Addr, "")
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "120000")
	t.Setenv("OTEL_BSP_EXPORT_TIMEOUT", "120000")
	t.Setenv("OTEL_BLRP_SCHEDULE_DELAY", "3600000")
	restoreGlobals(t)
	srv.Hold()
	tel, err := otelbridge.Setup(context.Background(), otelbridge.WithExporters(otelbridge.ExporterOTLP),
		otelbridge.WithoutGlobalPropagator())
	if err != nil {
		t.Fatal(err)
	}
	ctx, span := otel.Tracer("test").Start(context.Background(), "op")
	for i := range 20 {
		if err := progress.Record(ctx, progress.Progress(int64(i+1), 20, "steps")); err != nil {
			t.Fatal(err)
		}
	}
	span.End()

	sctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	err = tel.Shutdown(sctx)
	s := tel.Stats()
	busy := exportingGoroutines()

	var lost *sdkparts.LostRecordsError
	if !errors.As(err, &lost) || lost.Unflushed != 20 || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want a *LostRecordsError for 20 records and the deadline", err)
	}
	if s.Queued != 0 || s.Exported != 0 || s.Dropped != 20 {
		t.Errorf("Stats when Shutdown returned = %+v, want the 20 records counted as lost", s)
	}
	if len(busy) > 0 {
		t.Errorf("%d goroutines still exporting when Shutdown returned:\n%s", len(busy), strings.Join(busy, "\n\n"))
	}
	srv.Release()
	time.Sleep(100 * time.Millisecond)
	if after := tel.Stats(); after != s {
		t.Errorf("Stats changed after Shutdown returned: %+v, then %+v", s, after)
	}
}
