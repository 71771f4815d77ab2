package otelbridge_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/progress"
)

const outageQueue = 256

// setupOTLP runs the real Setup with only the OTLP exporter, configured
// through the standard environment, and restores the globals afterwards.
func setupOTLP(t *testing.T, srv *otlpServer, queue int) (shutdown func(context.Context) error, reader *sdkmetric.ManualReader) {
	t.Helper()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+srv.addr)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "500") // ms: one export attempt
	if os.Getenv("OTEL_BLRP_SCHEDULE_DELAY") == "" {
		t.Setenv("OTEL_BLRP_SCHEDULE_DELAY", "50") // ms
	}
	t.Setenv("OTEL_BLRP_MAX_QUEUE_SIZE", fmt.Sprint(queue))

	reader = sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	prevMP, prevLP, prevRec := otel.GetMeterProvider(), otel.GetLoggerProvider(), progress.Default()
	otel.SetMeterProvider(mp)
	shutdown, err := otelbridge.Setup(context.Background(),
		otelbridge.WithExporters(otelbridge.ExporterOTLP),
		otelbridge.WithResource(resource.NewSchemaless(attribute.String("service.name", "drops-test"))),
		otelbridge.WithoutTracerProvider(), otelbridge.WithoutGlobalPropagator())
	if err != nil {
		t.Fatalf("Setup with the collector absent: %v", err)
	}
	t.Cleanup(func() {
		_ = shutdown(context.Background())
		progress.SetDefault(prevRec)
		otel.SetLoggerProvider(prevLP)
		otel.SetMeterProvider(prevMP)
	})
	return shutdown, reader
}

// drive is the driver's own work: n steps, each recording a progress event
// through the global progress.Record. It runs on its own goroutine; the
// caller fails the test if it does not finish within a generous deadline,
// which is how a Record call that blocks on the collector would show.
func drive(t *testing.T, phase string, n int) {
	t.Helper()
	type result struct {
		sum      int
		maxQueue int64
		err      error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		for i := range n {
			r.sum += i // the work the driver is paid for
			evt := progress.Progress(int64(i+1), int64(n), "steps")
			evt.Resource = progress.Resource{Type: "Deployment", ID: phase}
			if err := progress.Record(context.Background(), evt); err != nil && r.err == nil {
				r.err = err
			}
			r.maxQueue = max(r.maxQueue, otelbridge.Stats().Queued)
		}
		done <- r
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("%s: Record returned %v", phase, r.err)
		}
		if want := n * (n - 1) / 2; r.sum != want {
			t.Fatalf("%s: driver work incomplete: %d, want %d", phase, r.sum, want)
		}
		if r.maxQueue > outageQueue {
			t.Fatalf("%s: %d records queued, above the bound %d", phase, r.maxQueue, outageQueue)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s: progress.Record blocked: %d calls did not finish", phase, n)
	}
}

// untilFlowing records a marker event until the server has it: the
// exporter reconnects by itself, on gRPC's reconnect backoff.
func untilFlowing(t *testing.T, srv *otlpServer, marker string) (recorded int) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for i := 0; ; i++ {
		evt := progress.Event{Type: "test/" + marker, Details: map[string]any{"i": i}}
		if err := progress.Record(context.Background(), evt); err != nil {
			t.Fatal(err)
		}
		if len(ofType(srv.records(), "test/"+marker)) > 0 {
			return i + 1
		}
		if time.Now().After(deadline) {
			t.Fatalf("events did not flow again after the collector came back (%s)", marker)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func reportedTotal(t *testing.T, srv *otlpServer) int64 {
	var n int64
	for _, r := range dropReports(t, srv.records()) {
		n += r.count
	}
	return n
}

// TestCollectorOutage: the collector is absent at start-up, comes up, is
// killed in the middle of the run and comes back. Setup is the real one;
// the exporter is the real OTLP/gRPC exporter configured from the
// environment; the collector is a real OTLP/gRPC server in this process.
func TestCollectorOutage(t *testing.T) {
	before := otelbridge.Stats()
	srv := newOTLPServer(t) // reserved, not listening: collector absent
	shutdown, reader := setupOTLP(t, srv, outageQueue)

	drive(t, "absent-at-startup", 3000)

	srv.start(t)
	untilFlowing(t, srv, "Recovered1")
	srv.waitFor(t, "a drop report after recovery", func(r []received) bool {
		return len(ofType(r, progress.TypeEventsDropped)) > 0
	})
	first := reportedTotal(t, srv)
	// At recovery at most a full queue and one batch in flight survive.
	if first < 3000-2*outageQueue {
		t.Errorf("first report covers %d records; at least %d of 3000 could not fit the queue", first, 3000-2*outageQueue)
	}

	srv.stop() // killed mid-run
	drive(t, "killed-mid-run", 3000)
	srv.start(t)
	untilFlowing(t, srv, "Recovered2")
	srv.waitFor(t, "a drop report for the second outage", func(r []received) bool {
		return reportedTotal(t, srv) > first
	})

	if err := shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown with the collector back: %v", err)
	}
	after := otelbridge.Stats()
	dropped := after.Dropped - before.Dropped
	exported := after.Exported - before.Exported
	got := srv.records()
	var progressRecs int64
	for _, r := range got {
		if r.rec.GetEventName() != progress.TypeEventsDropped {
			progressRecs++
		}
	}
	// An export that times out on the client after the server accepted it
	// counts as failed: the count is an upper bound, never an under-count.
	if progressRecs < exported || progressRecs > exported+after.ExportFailed-before.ExportFailed {
		t.Errorf("server has %d records, Stats says %d exported, %d failed", progressRecs, exported, after.ExportFailed-before.ExportFailed)
	}
	if total := reportedTotal(t, srv); total != dropped {
		t.Errorf("drop reports in the stream cover %d records, Stats says %d dropped", total, dropped)
	}
	m := dropMetric(t, reader)
	if m[otelbridge.DropQueueFull]+m[otelbridge.DropExportFailed]+m[otelbridge.DropShutdown] != dropped || dropped == 0 {
		t.Errorf("metric %s = %v, want a total of %d", otelbridge.MetricRecordsDropped, m, dropped)
	}
	for _, r := range dropReports(t, got) {
		if r.reason != otelbridge.DropQueueFull && r.reason != otelbridge.DropExportFailed {
			t.Errorf("unexpected reason %q", r.reason)
		}
	}
	t.Logf("exported %d, dropped %d (%v)", exported, dropped, m)
}

// TestShutdownWhileCollectorDown: shutdown with a deadline while the
// collector is gone returns promptly with the count it could not flush.
func TestShutdownWhileCollectorDown(t *testing.T) {
	srv := newOTLPServer(t)
	shutdown, _ := setupOTLP(t, srv, outageQueue)
	drive(t, "down", 100)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := shutdown(ctx)
	var lost *otelbridge.LostRecordsError
	if !errors.As(err, &lost) || lost.Unflushed+lost.Unreported != 100 {
		t.Fatalf("shutdown = %v, want a *LostRecordsError counting all 100 lost records", err)
	}
	t.Log(err)
}

// TestShutdownWithExpiredContext: the SDK's provider skips its processors
// when the context is already done; Setup's shutdown still ends them and
// says what was lost, instead of leaking their goroutines silently.
func TestShutdownWithExpiredContext(t *testing.T) {
	srv := startOTLPServer(t)
	srv.hold()
	t.Setenv("OTEL_BLRP_SCHEDULE_DELAY", "3600000") // no export before shutdown
	before := otelbridge.Stats()
	shutdown, _ := setupOTLP(t, srv, outageQueue)
	drive(t, "expired", 10)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := shutdown(ctx)
	var lost *otelbridge.LostRecordsError
	if !errors.As(err, &lost) || lost.Unflushed != 10 {
		t.Fatalf("shutdown with a cancelled context = %v, want a *LostRecordsError for 10 records", err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v does not name the cancellation", err)
	}
	deadline := time.Now().Add(time.Minute)
	for otelbridge.Stats().Shutdown-before.Shutdown != 10 {
		if time.Now().After(deadline) {
			t.Fatalf("Stats %+v: the 10 records were never counted", otelbridge.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
