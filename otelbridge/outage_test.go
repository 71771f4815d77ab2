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

	"github.com/progressotel/progressotel/internal/testkit/otlptest"
	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
)

const outageQueue = 256

// setupOTLP runs the real Setup with only the OTLP exporter, configured
// through the standard environment, and restores the globals afterwards.
func setupOTLP(t *testing.T, srv *otlptest.Server, queue int) (tel *otelbridge.Telemetry, reader *sdkmetric.ManualReader) {
	t.Helper()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+srv.Addr)
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
	tel, err := otelbridge.Setup(context.Background(),
		otelbridge.WithExporters(otelbridge.ExporterOTLP), otelbridge.WithoutMeterProvider(), // drops counted by the global mp
		otelbridge.WithResource(resource.NewSchemaless(attribute.String("service.name", "drops-test"))),
		otelbridge.WithoutTracerProvider(), otelbridge.WithoutGlobalPropagator())
	if err != nil {
		t.Fatalf("Setup with the collector absent: %v", err)
	}
	t.Cleanup(func() {
		_ = tel.Shutdown(context.Background())
		progress.SetDefault(prevRec)
		otel.SetLoggerProvider(prevLP)
		otel.SetMeterProvider(prevMP)
	})
	return tel, reader
}

// drive is the driver's own work: n steps, each recording a progress event
// through the global progress.Record. It runs on its own goroutine; the
// caller fails the test if it does not finish within a generous deadline,
// which is how a Record call that blocks on the collector would show.
func drive(t *testing.T, tel *otelbridge.Telemetry, phase string, n int) {
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
			r.maxQueue = max(r.maxQueue, tel.Stats().Queued)
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
func untilFlowing(t *testing.T, srv *otlptest.Server, marker string) (recorded int) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for i := 0; ; i++ {
		evt := progress.Event{Type: "test/" + marker, Details: map[string]any{"i": i}}
		if err := progress.Record(context.Background(), evt); err != nil {
			t.Fatal(err)
		}
		if len(otlptest.OfType(srv.Records(), "test/"+marker)) > 0 {
			return i + 1
		}
		if time.Now().After(deadline) {
			t.Fatalf("events did not flow again after the collector came back (%s)", marker)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func reportedTotal(t *testing.T, srv *otlptest.Server) int64 {
	t.Helper()
	return otlptest.ReportedTotal(t, srv.Records())
}

// TestCollectorOutage: the collector is absent at start-up, comes up, is
// killed in the middle of the run and comes back. Setup is the real one;
// the exporter is the real OTLP/gRPC exporter configured from the
// environment; the collector is a real OTLP/gRPC server in this process.
func TestCollectorOutage(t *testing.T) {
	srv := otlptest.New(t) // reserved, not listening: collector absent
	tel, reader := setupOTLP(t, srv, outageQueue)

	drive(t, tel, "absent-at-startup", 3000)

	srv.Start(t)
	untilFlowing(t, srv, "Recovered1")
	srv.WaitFor(t, "a drop report after recovery", func(r []otlptest.Received) bool {
		return len(otlptest.OfType(r, progress.TypeEventsDropped)) > 0
	})
	first := reportedTotal(t, srv)
	// At recovery at most a full queue and one batch in flight survive.
	if first < 3000-2*outageQueue {
		t.Errorf("first report covers %d records; at least %d of 3000 could not fit the queue", first, 3000-2*outageQueue)
	}

	// The server keeps a request before it answers: wait until the driver
	// has the answer too, or the kill below would make it send the report
	// again (an over-count the accounting allows, but not this test).
	for deadline := time.Now().Add(time.Minute); tel.Stats().Reported < first; {
		if time.Now().After(deadline) {
			t.Fatalf("the driver never learned that its report of %d records was delivered: %+v", first, tel.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}

	srv.Stop() // killed mid-run
	drive(t, tel, "killed-mid-run", 3000)
	srv.Start(t)
	untilFlowing(t, srv, "Recovered2")
	srv.WaitFor(t, "a drop report for the second outage", func(r []otlptest.Received) bool {
		return reportedTotal(t, srv) > first
	})

	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown with the collector back: %v", err)
	}
	after := tel.Stats()
	dropped, exported := after.Dropped, after.Exported
	got := srv.Records()
	var progressRecs int64
	for _, r := range got {
		if r.Rec.GetEventName() != progress.TypeEventsDropped {
			progressRecs++
		}
	}
	// An export that times out on the client after the server accepted it
	// counts as failed: the count is an upper bound, never an under-count.
	if progressRecs < exported || progressRecs > exported+after.ExportFailed {
		t.Errorf("server has %d records, Stats says %d exported, %d failed", progressRecs, exported, after.ExportFailed)
	}
	if total := reportedTotal(t, srv); total != dropped {
		t.Errorf("drop reports in the stream cover %d records, Stats says %d dropped", total, dropped)
	}
	m := otlptest.DropMetric(t, reader)
	if m[sdkparts.DropQueueFull]+m[sdkparts.DropExportFailed]+m[sdkparts.DropShutdown] != dropped || dropped == 0 {
		t.Errorf("metric %s = %v, want a total of %d", sdkparts.MetricRecordsDropped, m, dropped)
	}
	for _, r := range otlptest.DropReports(t, got, "drops-test") {
		if r.Reason != sdkparts.DropQueueFull && r.Reason != sdkparts.DropExportFailed {
			t.Errorf("unexpected reason %q", r.Reason)
		}
	}
	t.Logf("exported %d, dropped %d (%v)", exported, dropped, m)
}

// TestShutdownWhileCollectorDown: shutdown with a deadline while the
// collector is gone returns promptly with the count it could not flush.
func TestShutdownWhileCollectorDown(t *testing.T) {
	srv := otlptest.New(t)
	tel, _ := setupOTLP(t, srv, outageQueue)
	drive(t, tel, "down", 100)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := tel.Shutdown(ctx)
	var lost *sdkparts.LostRecordsError
	if !errors.As(err, &lost) || lost.Unflushed+lost.Unreported != 100 {
		t.Fatalf("shutdown = %v, want a *LostRecordsError counting all 100 lost records", err)
	}
	t.Log(err)
}

// TestShutdownWithExpiredContext: the SDK's provider skips its processors
// when the context is already done; Setup's shutdown still ends them and
// says what was lost, instead of leaking their goroutines silently.
func TestShutdownWithExpiredContext(t *testing.T) {
	srv := otlptest.Start(t)
	srv.Hold()
	t.Setenv("OTEL_BLRP_SCHEDULE_DELAY", "3600000") // no export before shutdown
	tel, _ := setupOTLP(t, srv, outageQueue)
	drive(t, tel, "expired", 10)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := tel.Shutdown(ctx)
	var lost *sdkparts.LostRecordsError
	if !errors.As(err, &lost) || lost.Unflushed != 10 {
		t.Fatalf("shutdown with a cancelled context = %v, want a *LostRecordsError for 10 records", err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v does not name the cancellation", err)
	}
	// Counted by the time shutdown returned, not some time later.
	if s := tel.Stats(); s.Shutdown != 10 || s.Queued != 0 {
		t.Fatalf("Stats when shutdown returned = %+v: want the 10 records counted as lost at shutdown", s)
	}
}
