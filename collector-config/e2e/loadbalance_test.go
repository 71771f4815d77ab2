package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/progressotel/progressotel/progress"
)

// Under load, the agents' load_balancing exporter (routing_key: traceID)
// sends every record of one run (trace) to one gateway, whichever agent
// the record came through: 2 agents, 3 gateways each with a Kafka of its
// own, 16 concurrent runs whose events alternate between the agents. A
// release that hashed logs by another key (the service name, the default
// for logs) would put all runs on one gateway, or a run on several.
func TestTiersRunReachesOneGateway(t *testing.T) {
	const runs, perRun = 16, 40
	const topic = "progress_events_tenant-a"
	var gateways []*collector
	var consumers []*consumer
	for range 3 {
		b := startBroker(t)
		consumers = append(consumers, startConsumer(t, b.addr()))
		gateways = append(gateways, startGateway(t, b, nil))
	}
	var drivers []*driver
	for range 2 {
		a := newAgent(t, startBroker(t), nil, gateways...)
		a.start()
		drivers = append(drivers, newDriver(t, a.grpc, driverOpt{}))
	}

	traceOf := map[string]string{} // run -> trace id
	var mu sync.Mutex
	var wg sync.WaitGroup
	for r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run := fmt.Sprintf("lb-run-%d", r)
			ctx, span := drivers[0].tp.Tracer("driver").Start(context.Background(), run)
			defer span.End()
			mu.Lock()
			traceOf[run] = span.SpanContext().TraceID().String()
			mu.Unlock()
			for i := range perRun {
				if err := drivers[i%2].rec.Record(ctx, progress.Event{
					Type: "ansible/TaskStarted", Details: map[string]any{"run": run, "i": i},
					Envelope: progress.Envelope{Scope: map[string]string{"tenant": "tenant-a"}},
				}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	for _, d := range drivers {
		d.flush(t)
	}

	// Wait for every event, on whichever gateway's Kafka it reached.
	seen := func() int {
		n := 0
		for _, c := range consumers {
			n += len(onTopic(c.all(), topic))
		}
		return n
	}
	deadline := time.Now().Add(120 * time.Second)
	for seen() < runs*perRun {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events reached the gateways' Kafkas", seen(), runs*perRun)
		}
		time.Sleep(100 * time.Millisecond)
	}

	gatewayOf := map[string]int{}       // run -> gateway index
	events := map[string]map[int]bool{} // run -> the i seen
	used := map[int]bool{}
	for g, c := range consumers {
		for _, m := range onTopic(c.all(), topic) {
			body := m.body(t)
			det := body["details"].(map[string]any)
			run, i := det["run"].(string), int(det["i"].(float64))
			if body["traceId"] != traceOf[run] {
				t.Errorf("%s event %d: traceId %v, want %s", run, i, body["traceId"], traceOf[run])
			}
			if prev, ok := gatewayOf[run]; ok && prev != g {
				t.Errorf("%s reached gateways %d and %d", run, prev, g)
			}
			gatewayOf[run] = g
			used[g] = true
			if events[run] == nil {
				events[run] = map[int]bool{}
			}
			events[run][i] = true
		}
	}
	for run := range traceOf {
		if len(events[run]) != perRun {
			t.Errorf("%s: %d distinct events, want %d", run, len(events[run]), perRun)
		}
	}
	// Otherwise the test shows nothing about balancing.
	if len(used) < 2 {
		t.Errorf("all %d runs reached one gateway", runs)
	}
	t.Logf("%d runs over gateways %v", runs, gatewayOf)
}
