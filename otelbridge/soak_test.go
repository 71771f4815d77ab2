package otelbridge_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/testkit/otlptest"
	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
)

// soakHeapBound is the most the live heap may grow while the collector
// flaps: the default queue of 2048 records of a few KiB each, the gRPC
// buffers, and room for the garbage collector's slack.
const soakHeapBound = 64 << 20

// TestSoak drives the real Setup and OTLP exporter from many goroutines
// while the collector is killed and restarted over and over, then checks
// that memory stayed bounded, no goroutine leaked, and no record was lost
// without being counted and reported.
//
// It runs for PROGRESSOTEL_SOAK (a Go duration, e.g. "2m": make soak),
// else for 3 seconds, which is the short version in make test.
func TestSoak(t *testing.T) {
	d := 3 * time.Second
	if v := os.Getenv("PROGRESSOTEL_SOAK"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("PROGRESSOTEL_SOAK=%q: %v", v, err)
		}
	}
	runtime.GC()
	baseGoroutines := runtime.NumGoroutine()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	baseHeap := ms.HeapInuse

	srv := otlptest.New(t)
	srv.Compact = true
	srv.Start(t)
	tel, reader := setupOTLP(t, srv, sdkparts.DefaultMaxQueueSize)

	const workers = 8
	var (
		stop     atomic.Bool
		wg       sync.WaitGroup
		emitted  [workers]int64
		traces   [workers]trace.TraceID
		maxQueue atomic.Int64
	)
	for w := range workers {
		ctx, tid := otlptest.Operation(t, byte(100+w), fmt.Sprint("soak-", w%3))
		traces[w] = tid
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				evt := progress.Event{Type: "ansible/TaskCompletedOnHost", Details: map[string]any{
					"taskName": "install packages", "hostName": fmt.Sprint("host-", i%50),
					"taskResult": map[string]any{"msg": strings.Repeat("m", 200), "changed": i%2 == 0, "rc": 0,
						"results": []any{map[string]any{"item": "a"}, map[string]any{"item": "b"}}},
				}}
				evt.Scope = map[string]string{"tenant": fmt.Sprint("soak-", w%3)}
				if err := progress.Record(ctx, evt); err != nil {
					t.Error(err)
					return
				}
				emitted[w]++
				if q := tel.Stats().Queued; q > maxQueue.Load() {
					maxQueue.Store(q)
				}
				if i%64 == 0 {
					runtime.Gosched()
				}
			}
		})
	}

	// The collector flaps: up, killed, up again, for the whole run.
	end := time.Now().Add(d)
	for up := true; time.Now().Before(end); up = !up {
		phase := time.Second // down
		if up {
			phase = 1500 * time.Millisecond
		}
		time.Sleep(max(0, min(phase, time.Until(end))))
		if up {
			srv.Stop()
		} else {
			srv.Start(t)
		}
	}
	stop.Store(true)
	wg.Wait()
	if !srv.Running() {
		srv.Start(t)
	}

	runtime.GC()
	runtime.ReadMemStats(&ms)
	if grown := int64(ms.HeapInuse) - int64(baseHeap); grown > soakHeapBound {
		t.Errorf("heap grew by %d MiB while the collector flapped, bound %d MiB", grown>>20, soakHeapBound>>20)
	}
	if q := maxQueue.Load(); q > sdkparts.DefaultMaxQueueSize {
		t.Errorf("queue reached %d records, bound %d", q, sdkparts.DefaultMaxQueueSize)
	}

	markers := untilFlowing(t, srv, "SoakRecovered")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with the collector up: %v", err)
	}

	var total int64
	for _, n := range emitted {
		total += n
	}
	after := tel.Stats()
	exported, dropped := after.Exported, after.Dropped
	if exported+dropped != total+int64(markers) {
		t.Errorf("exported %d + dropped %d != recorded %d", exported, dropped, total+int64(markers))
	}
	if m := otlptest.DropMetric(t, reader); m[sdkparts.DropQueueFull]+m[sdkparts.DropExportFailed]+m[sdkparts.DropShutdown] != dropped {
		t.Errorf("metric %v does not sum to %d dropped", m, dropped)
	}

	// Per operation: every sequence number either arrived or is covered by
	// a drop report of that trace. A retried export may deliver a record
	// twice, and one that timed out after the server took it is counted as
	// lost too: the accounting may over-count, never under-count.
	recs := srv.Records()
	got := otlptest.Sequences(t, recs)
	reported := map[trace.TraceID]int64{}
	for _, r := range otlptest.DropReports(t, recs, "drops-test") {
		reported[r.Trace] += r.Count
	}
	for w, tid := range traces {
		distinct := map[int64]bool{}
		for _, s := range got[tid] {
			if s < 1 || s > emitted[w] {
				t.Errorf("trace %d: sequence %d outside 1..%d", w, s, emitted[w])
			}
			distinct[s] = true
		}
		if int64(len(distinct))+reported[tid] < emitted[w] {
			t.Errorf("trace %d: %d received + %d reported < %d emitted: silent loss", w, len(distinct), reported[tid], emitted[w])
		}
	}
	t.Logf("%v: recorded %d, exported %d, dropped %d, reported %d, max queue %d, heap +%d KiB",
		d, total, exported, dropped, after.Reported, maxQueue.Load(), (int64(ms.HeapInuse)-int64(baseHeap))>>10)

	srv.Stop()
	deadline := time.Now().Add(30 * time.Second)
	for runtime.NumGoroutine() > baseGoroutines+5 {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines after shutdown, %d before:\n%s", runtime.NumGoroutine(), baseGoroutines, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(50 * time.Millisecond)
	}
}
