package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/progressotel/progressotel/progress"
)

// retryingExporter is a driver's OTLP exporter whose retries are visible:
// the exporter itself does not retry, and this wrapper retries what the
// collector refuses with a retryable code, counting each refusal.
type retryingExporter struct {
	next    sdklog.Exporter
	refused atomic.Int64
	mu      sync.Mutex
	other   []error // errors that were not retryable refusals
}

func (e *retryingExporter) Export(ctx context.Context, recs []sdklog.Record) error {
	for {
		err := e.next.Export(ctx, recs)
		if err == nil {
			return nil
		}
		if c := status.Code(err); (c == codes.Unavailable || c == codes.ResourceExhausted) && strings.Contains(err.Error(), "memory") {
			e.refused.Add(1)
		} else {
			e.mu.Lock()
			e.other = append(e.other, err)
			e.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (e *retryingExporter) Shutdown(ctx context.Context) error   { return e.next.Shutdown(ctx) }
func (e *retryingExporter) ForceFlush(ctx context.Context) error { return e.next.ForceFlush(ctx) }

// A burst larger than the collector's memory limit: memory_limiter refuses
// data before it is accepted, the drivers see a retryable error (gRPC
// Unavailable) and retry, and every event reaches Kafka in the end, once. The
// limits are set low (soft limit 40 MiB of heap) so that a burst on a test
// machine crosses them.
func TestMemoryLimiterRefusesBurstNothingLost(t *testing.T) {
	const drivers, perDriver = 4, 3000
	const topic = "progress_events_tenant-a"
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	col := newCollector(t, b.addr(), []string{"tenant-a"}, map[string]string{
		"PROGRESS_MEMORY_LIMIT_MIB": "64", "PROGRESS_MEMORY_SPIKE_MIB": "24",
	})
	col.start()

	pad := strings.Repeat("p", 2000)
	var exporters []*retryingExporter
	var wg sync.WaitGroup
	for dr := range drivers {
		exp, err := otlploggrpc.New(context.Background(), otlploggrpc.WithEndpoint(col.grpc), otlploggrpc.WithInsecure(),
			otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: false}))
		if err != nil {
			t.Fatal(err)
		}
		re := &retryingExporter{next: exp}
		exporters = append(exporters, re)
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(re,
			sdklog.WithMaxQueueSize(perDriver), sdklog.WithExportMaxBatchSize(512), sdklog.WithExportInterval(20*time.Millisecond))))
		rec := progress.NewRecorder(progress.WithLoggerProvider(lp))
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				if err := lp.Shutdown(ctx); err != nil {
					t.Errorf("driver %d: shutdown: %v", dr, err)
				}
			}()
			for i := range perDriver {
				if err := rec.Record(context.Background(), progress.Event{
					Type:     "ansible/TaskCompletedOnHost",
					Details:  map[string]any{"burst": fmt.Sprintf("d%d-%d", dr, i), "a": pad, "b": pad, "c": pad},
					Envelope: progress.Envelope{Scope: map[string]string{"tenant": "tenant-a"}},
				}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait() // every driver shut down: everything it recorded was exported

	total := drivers * perDriver
	msgs := cons.waitFor(t, 2*time.Minute, fmt.Sprintf("%d events", total), func(m []message) bool {
		return len(onTopic(m, topic)) >= total
	})
	seen := map[string]int{}
	for _, m := range onTopic(msgs, topic) {
		det, _ := m.body(t)["details"].(map[string]any)
		seen[det["burst"].(string)]++
	}
	dups := 0
	for _, n := range seen {
		dups += n - 1
	}
	if len(seen) != total {
		t.Errorf("%d distinct events on Kafka, want %d", len(seen), total)
	}
	// A request is refused or accepted as a whole: one memory_limiter
	// decides for both log pipelines, so a retried request was never
	// half-delivered.
	if dups != 0 {
		t.Errorf("%d events reached Kafka twice", dups)
	}
	var refused int64
	for _, e := range exporters {
		refused += e.refused.Load()
		for _, err := range e.other {
			t.Errorf("a driver got an error that is not a retryable refusal: %v", err)
		}
	}
	collectorRefused := col.metric("otelcol_receiver_refused_log_records", nil)
	t.Logf("%d exports refused and retried; the collector counted %v refused records; %d duplicates", refused, collectorRefused, dups)
	// Otherwise the burst did not reach the limit and the test shows nothing.
	if refused == 0 || collectorRefused == 0 {
		t.Errorf("no refusal: the burst stayed under the memory limit (refused exports %d, refused records %v)", refused, collectorRefused)
	}
}
