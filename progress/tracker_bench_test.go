package progress_test

import (
	"context"
	"fmt"
	"testing"

	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/progress"
)

// benchTracker returns a Tracker that already knows n resources, each on
// two streams, as a controller's would after its first resync.
func benchTracker(b *testing.B, n int) (*progress.Tracker, []progress.Transition) {
	// A real SDK provider whose processor drops records: the benchmarks
	// measure the Tracker and the Recorder, not a test sink.
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(trDiscard{}))
	b.Cleanup(func() { _ = lp.Shutdown(context.Background()) })
	tk := progress.NewTracker(progress.NewRecorder(progress.WithLoggerProvider(lp)))
	trs := make([]progress.Transition, 0, 2*n)
	for i := range n {
		res := progress.Resource{Type: "ComputeCluster", Namespace: "org-acme", ID: fmt.Sprint("cluster-", i), UID: fmt.Sprint("uid-", i)}
		env := progress.Envelope{
			Component:          progress.Component{Name: "compute.unikorn-cloud.org"},
			Resource:           res,
			Scope:              map[string]string{"organization": "acme", "project": "web"},
			ObservedGeneration: 3,
		}
		trs = append(trs,
			progress.Transition{Stream: progress.StreamProvisioning, Condition: trCond("True", "Provisioned", "the cluster is ready"), Envelope: env},
			progress.Transition{Stream: progress.StreamLifecycle, Condition: trCond("True", "Running", ""), Envelope: env})
	}
	for _, tr := range trs {
		if ok, err := tk.Observe(context.Background(), tr); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
	return tk, trs
}

// BenchmarkTransitionUnchanged is the cost of a reconcile that changes
// nothing: the common case, paid on every poll. Budget: 100 ns, 0 allocs.
func BenchmarkTransitionUnchanged(b *testing.B) {
	tk, trs := benchTracker(b, 1000)
	ctx := context.Background()
	tr := trs[len(trs)/2]
	b.ReportAllocs()
	for b.Loop() {
		if ok, _ := tk.Observe(ctx, tr); ok {
			b.Fatal("emitted")
		}
	}
}

// BenchmarkTransitionUnchangedParallel is the same from every core at once,
// on different resources: the cost of the Tracker's single lock.
func BenchmarkTransitionUnchangedParallel(b *testing.B) {
	tk, trs := benchTracker(b, 1000)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if ok, _ := tk.Observe(ctx, trs[i%len(trs)]); ok {
				b.Fatal("emitted")
			}
			i += 7
		}
	})
}

// BenchmarkTransitionChanged is an emitted transition, through the real SDK
// up to its processors: what an actual change costs.
func BenchmarkTransitionChanged(b *testing.B) {
	tk, trs := benchTracker(b, 1)
	ctx := context.Background()
	a, c := trs[1], trs[1]
	c.Condition = trCond("False", "Stopped", "")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		tr := a
		if i%2 == 0 {
			tr = c
		}
		i++
		if ok, err := tk.Observe(ctx, tr); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

type trDiscard struct{}

func (trDiscard) OnEmit(context.Context, *sdklog.Record) error           { return nil }
func (trDiscard) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (trDiscard) Shutdown(context.Context) error                         { return nil }
func (trDiscard) ForceFlush(context.Context) error                       { return nil }
