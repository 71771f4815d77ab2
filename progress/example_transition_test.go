package progress_test

import (
	"context"
	"fmt"

	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

// transitionPrinter is an SDK processor that prints each transition it
// receives as a consumer would read it, previous state included.
type transitionPrinter struct{ trDiscard }

func (transitionPrinter) OnEmit(_ context.Context, r *sdklog.Record) error {
	d, err := wire.Decode(r)
	if err != nil || d.Transition == nil {
		return err
	}
	t := d.Transition
	was := "no known previous"
	if t.Previous != nil {
		was = "was " + t.Previous.Reason
	}
	fmt.Printf("%s %s/%s: %s=%s %q (%s)\n", r.EventName(), d.Resource.Type, d.Resource.ID, t.Reason, t.Status, t.Message, was)
	return nil
}

// A reconciler observes its conditions on every pass; the Tracker emits
// only the passes where something changed, each with its previous state.
func ExampleTracker() {
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(transitionPrinter{}))
	defer func() { _ = lp.Shutdown(context.Background()) }()
	tracker := progress.NewTracker(progress.NewRecorder(progress.WithLoggerProvider(lp)), progress.WithCapacity(1000))

	env := progress.Envelope{Resource: progress.Resource{Type: "ComputeCluster", ID: "cluster-a"}}
	passes := []progress.Condition{
		{Status: "False", Reason: "Provisioning", Message: "creating the network"},
		{Status: "False", Reason: "Provisioning", Message: "creating the network"}, // next poll: nothing new
		{Status: "False", Reason: "Provisioning", Message: "creating the servers"}, // message only: a transition
		{Status: "True", Reason: "Provisioned"},
		{Status: "True", Reason: "Provisioned"},
	}
	ctx := context.Background()
	for _, c := range passes {
		// In a controller: after the status update has been persisted.
		if _, err := tracker.Observe(ctx, progress.Transition{Stream: progress.StreamProvisioning, Condition: c, Envelope: env}); err != nil {
			fmt.Println(err)
		}
	}
	// The object was deleted: forget it.
	tracker.Forget(env.Resource)
	fmt.Println("tracked:", tracker.Len())
	// Output:
	// provisioning ComputeCluster/cluster-a: Provisioning=False "creating the network" (no known previous)
	// provisioning ComputeCluster/cluster-a: Provisioning=False "creating the servers" (was Provisioning)
	// provisioning ComputeCluster/cluster-a: Provisioned=True "" (was Provisioning)
	// tracked: 0
}

// The stateless edge-trigger: compare with the condition read from the
// object before this reconcile, and emit after the status write succeeded.
func ExampleRecorder_RecordIfChanged() {
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(transitionPrinter{}))
	defer func() { _ = lp.Shutdown(context.Background()) }()
	rec := progress.NewRecorder(progress.WithLoggerProvider(lp))
	ctx := context.Background()

	prior := progress.Condition{Status: "False", Reason: "Pending"} // from the object's status
	next := progress.Condition{Status: "True", Reason: "Running", Message: "the server is running"}
	persist := func() error { return nil } // the status update

	if err := persist(); err != nil {
		return // nothing happened, so nothing is emitted; the retry will emit
	}
	emitted, err := rec.RecordIfChanged(ctx, prior, progress.Transition{
		Stream:    progress.StreamLifecycle,
		Condition: next,
		Envelope:  progress.Envelope{Resource: progress.Resource{Type: "Server", ID: "web-1"}},
	})
	fmt.Println(emitted, err)
	// Output:
	// lifecycle Server/web-1: Running=True "the server is running" (was Pending)
	// true <nil>
}
