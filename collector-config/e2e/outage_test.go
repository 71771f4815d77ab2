package e2e

// Driver-side outage test against the real collector distribution: the
// driver uses otelbridge.Setup with its OTLP exporter (http/protobuf, the
// default protocol, to the collector's OTLP/HTTP port), the collector
// (bin/otelcol-progress with the shipped configuration) is absent at
// start-up, then crashes (SIGKILL) in the middle of the run. Owned by the
// reliability work (issue 7); it uses this package's harness unchanged.

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/progress"
)

const outageTenant = "tenant-a"

// outageDrive records n events through the global progress.Record on its
// own goroutine and fails if the calls do not finish within a generous
// deadline: that is how a Record blocked on the collector would show.
func outageDrive(t *testing.T, phase string, n int) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		var first error
		for i := range n {
			evt := progress.Event{Type: "ansible/TaskStartedOnHost", Details: map[string]any{"phase": phase, "n": i}}
			evt.Scope = map[string]string{"tenant": outageTenant}
			if err := progress.Record(context.Background(), evt); err != nil && first == nil {
				first = err
			}
		}
		done <- first
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: Record: %v", phase, err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s: progress.Record blocked while the collector was down", phase)
	}
}

// dropped sums the counts of the common/EventsDropped events TNCO got.
func dropped(t *testing.T, msgs []message) (total float64, reports int) {
	for _, m := range msgs {
		if m.Topic != "progress_events_"+outageTenant {
			continue
		}
		b := m.body(t)
		if b["progressEventType"] != progress.TypeEventsDropped {
			continue
		}
		det, _ := b["details"].(map[string]any)
		n, _ := det["count"].(float64)
		if n <= 0 || det["since"] == nil || det["until"] == nil || det["reason"] == nil {
			t.Errorf("EventsDropped without count and window: %s", m.Value)
		}
		total += n
		reports++
	}
	return total, reports
}

// untilDelivered records a marker event until TNCO has it.
func untilDelivered(t *testing.T, cons *consumer, marker string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for i := 0; countMarker(cons.all(), marker) == 0; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("events did not flow again after the collector came back (%s)", marker)
		}
		evt := progress.Event{Type: "ansible/PlayStarted", Details: map[string]any{"playName": marker, "i": i}}
		evt.Scope = map[string]string{"tenant": outageTenant}
		if err := progress.Record(context.Background(), evt); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestDriverSurvivesCollectorOutage(t *testing.T) {
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	col := newCollector(t, b.addr(), []string{outageTenant}, nil) // not started: absent

	// The collector's OTLP/HTTP port, with the default protocol
	// (http/protobuf): what a user who sets only the endpoint gets.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+col.http)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1000")
	t.Setenv("OTEL_BLRP_SCHEDULE_DELAY", "100")
	t.Setenv("OTEL_BLRP_MAX_QUEUE_SIZE", "256")
	prevLP, prevRec := otel.GetLoggerProvider(), progress.Default()
	tel, err := otelbridge.Setup(context.Background(), otelbridge.WithExporters(otelbridge.ExporterOTLP),
		otelbridge.WithoutTracerProvider(), otelbridge.WithoutGlobalPropagator())
	if err != nil {
		t.Fatalf("Setup with the collector absent: %v", err)
	}
	t.Cleanup(func() {
		_ = tel.Shutdown(context.Background())
		progress.SetDefault(prevRec)
		otel.SetLoggerProvider(prevLP)
	})

	outageDrive(t, "absent", 2000)
	col.start()
	untilDelivered(t, cons, "recovered-1")
	cons.waitFor(t, 90*time.Second, "a drop report after the first outage", func(m []message) bool {
		_, n := dropped(t, m)
		return n > 0
	})
	first, _ := dropped(t, cons.all())
	// At recovery at most a full queue and one batch in flight survive.
	if first < 2000-2*256 {
		t.Errorf("first reports count %v lost, want at least %d", first, 2000-2*256)
	}

	if err := col.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-col.exited
	outageDrive(t, "killed", 2000)
	again := *col // same ports, same storage
	again.start()
	untilDelivered(t, cons, "recovered-2")
	cons.waitFor(t, 90*time.Second, "a drop report after the crash", func(m []message) bool {
		total, _ := dropped(t, m)
		return total > first
	})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with the collector back: %v", err)
	}
	after := tel.Stats()
	lost := after.Dropped
	// Every loss the driver counted reached TNCO as a report. The collector
	// itself loses nothing here: it persists what it accepted.
	cons.waitFor(t, 90*time.Second, fmt.Sprintf("reports covering all %d lost records", lost), func(m []message) bool {
		total, _ := dropped(t, m)
		return int64(total) == lost
	})
	t.Logf("lost %d (queue full %d, export failed %d), exported %d", lost,
		after.QueueFull, after.ExportFailed, after.Exported)
}
