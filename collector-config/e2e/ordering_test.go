package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/progressotel/progressotel/progress"
)

// On a tenant topic with several partitions, every event of one run
// (trace) lands on one partition, keyed by the trace id, in the order it
// was recorded: a consumer reading each partition in order reads each run
// in order. Runs are recorded concurrently, so the collector sees them
// interleaved in the same requests and batches.
func TestOrderPerRunWithPartitions(t *testing.T) {
	const runs, perRun = 12, 25
	const topic = "progress_events_tenant-a"
	b := startBroker(t, kfake.DefaultNumPartitions(3))
	cons := startConsumer(t, b.addr())
	col := newCollector(t, b.addr(), []string{"tenant-a"}, nil)
	col.start()
	d := newDriver(t, col.grpc, driverOpt{})

	traceOf := map[string]string{} // run -> trace id
	var mu sync.Mutex
	var wg sync.WaitGroup
	for r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run := fmt.Sprintf("run-%d", r)
			ctx, span := d.tp.Tracer("driver").Start(context.Background(), run)
			defer span.End()
			mu.Lock()
			traceOf[run] = span.SpanContext().TraceID().String()
			mu.Unlock()
			for i := range perRun {
				if err := d.rec.Record(ctx, progress.Event{
					Type: "ansible/TaskStarted", Details: map[string]any{"run": run, "i": i},
					Envelope: progress.Envelope{Scope: map[string]string{"tenant": "tenant-a"}},
				}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	d.flush(t)
	msgs := cons.waitFor(t, 90*time.Second, "every event", func(m []message) bool { return len(onTopic(m, topic)) >= runs*perRun })

	partitionOf := map[string]int32{}
	next := map[string]int{} // the i expected next, per run
	used := map[int32]bool{}
	for _, m := range onTopic(msgs, topic) {
		body := m.body(t)
		det := body["details"].(map[string]any)
		run, i := det["run"].(string), int(det["i"].(float64))
		if p, seen := partitionOf[run]; seen && p != m.Partition {
			t.Errorf("%s is on partitions %d and %d", run, p, m.Partition)
		}
		partitionOf[run] = m.Partition
		used[m.Partition] = true
		if string(m.Key) != traceOf[run] || body["traceId"] != traceOf[run] {
			t.Errorf("%s event %d: key %q, traceId %v, want the trace id %s", run, i, m.Key, body["traceId"], traceOf[run])
		}
		// The consumer keeps each partition's order: events of a run must
		// come in recording order, and sequence says so too.
		if i != next[run] || body["sequence"] != float64(i+1) {
			t.Errorf("%s: event %d (sequence %v) where %d was next", run, i, body["sequence"], next[run])
		}
		next[run] = i + 1
	}
	for run := range traceOf {
		if next[run] != perRun {
			t.Errorf("%s: %d events in order, want %d", run, next[run], perRun)
		}
	}
	// Otherwise the test shows nothing about several partitions.
	if len(used) < 2 {
		t.Errorf("all %d runs landed on one partition", runs)
	}
	t.Logf("%d runs over partitions %v", runs, used)
}
