package progress_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
)

var scopeEnv = progress.Envelope{
	Component:          progress.Component{Name: "my-driver", Version: "1.0.0"},
	Resource:           progress.Resource{Type: "Network", ID: "net-1", Namespace: "ns", UID: "u-1"},
	Scope:              map[string]string{"organization": "acme", "project": "web"},
	ObservedGeneration: 3,
}

// TestContextEnvelopeOnEveryRecord: the envelope set once on the context
// reaches every record of the scope, whatever made it: Record with a
// literal event and with each common helper, RecordTransition,
// RecordIfChanged and a Tracker, through a Recorder and through the
// package-level functions.
func TestContextEnvelopeOnEveryRecord(t *testing.T) {
	sink := progresstest.Install(t)
	rec := sink.Recorder()
	ctx := progress.ContextWithEnvelope(context.Background(), scopeEnv)
	tr := progress.Transition{Stream: progress.StreamProvisioning, Condition: progress.Condition{Status: "True", Reason: "Provisioned"}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(rec.Record(ctx, progress.Event{Type: "my/StepDone"}))
	must(rec.Record(ctx, progress.OperationStarted("Install")))
	must(rec.Record(ctx, progress.Progress(1, 2, "tasks")))
	must(rec.Record(ctx, progress.OperationCompleted("Install", time.Second)))
	must(rec.Record(ctx, progress.OperationFailed("Install", "INTERNAL_ERROR", "failed")))
	must(rec.Record(ctx, progress.EventsDropped(1, time.Now(), time.Now(), "test")))
	must(rec.RecordTransition(ctx, tr))
	_, err := rec.RecordIfChanged(ctx, progress.Condition{}, tr)
	must(err)
	_, err = progress.NewTracker(rec).Observe(ctx, tr)
	must(err)
	must(progress.Record(ctx, progress.OperationStarted("Install")))
	must(progress.RecordTransition(ctx, tr))
	_, err = progress.NewTracker(nil).Observe(ctx, tr)
	must(err)

	evs := sink.Events()
	if len(evs) != 12 {
		t.Fatalf("got %d records, want 12", len(evs))
	}
	for i, ev := range evs {
		if !reflect.DeepEqual(ev.Envelope, scopeEnv) {
			t.Errorf("record %d (%s%s): envelope %+v, want %+v", i, ev.ProgressEventType, ev.EventName, ev.Envelope, scopeEnv)
		}
		if ev.Tenant != "acme" {
			t.Errorf("record %d: tenant %q, want acme (routed, not progress_unrouted)", i, ev.Tenant)
		}
	}
}

// TestContextEnvelopePrecedence: the event's own fields win over the
// context's, field by field; an event's Scope replaces the context's whole;
// a nested ContextWithEnvelope merges the same way.
func TestContextEnvelopePrecedence(t *testing.T) {
	sink := progresstest.NewSink()
	rec := sink.Recorder()
	ctx := progress.ContextWithEnvelope(context.Background(), scopeEnv)
	evt := progress.OperationStarted("Install")
	evt.Resource = progress.Resource{ID: "net-2"}
	evt.Scope = map[string]string{"tenant": "t2"}
	evt.ObservedGeneration = 9
	if err := rec.Record(ctx, evt); err != nil {
		t.Fatal(err)
	}
	inner := progress.ContextWithEnvelope(ctx, progress.Envelope{Component: progress.Component{Version: "2.0.0"}, Resource: progress.Resource{Type: "Subnet"}})
	if err := rec.Record(inner, progress.OperationStarted("Install")); err != nil {
		t.Fatal(err)
	}
	evs := sink.Events()
	want := progress.Envelope{
		Component:          scopeEnv.Component,
		Resource:           progress.Resource{Type: "Network", ID: "net-2", Namespace: "ns", UID: "u-1"},
		Scope:              map[string]string{"tenant": "t2"},
		ObservedGeneration: 9,
	}
	if !reflect.DeepEqual(evs[0].Envelope, want) {
		t.Errorf("event over context: %+v, want %+v", evs[0].Envelope, want)
	}
	want = scopeEnv
	want.Component.Version = "2.0.0"
	want.Resource.Type = "Subnet"
	if !reflect.DeepEqual(evs[1].Envelope, want) {
		t.Errorf("nested context: %+v, want %+v", evs[1].Envelope, want)
	}
	if got := progress.EnvelopeFromContext(inner); !reflect.DeepEqual(got, want) {
		t.Errorf("EnvelopeFromContext = %+v, want %+v", got, want)
	}
	if got := progress.EnvelopeFromContext(context.Background()); !reflect.DeepEqual(got, progress.Envelope{}) {
		t.Errorf("EnvelopeFromContext(Background) = %+v, want zero", got)
	}
}

// TestContextEnvelopeScopeCopied: the caller may reuse its Scope map after
// ContextWithEnvelope.
func TestContextEnvelopeScopeCopied(t *testing.T) {
	sink := progresstest.NewSink()
	scope := map[string]string{"organization": "acme"}
	ctx := progress.ContextWithEnvelope(context.Background(), progress.Envelope{Scope: scope})
	scope["organization"] = "other"
	if err := sink.Recorder().Record(ctx, progress.OperationStarted("Install")); err != nil {
		t.Fatal(err)
	}
	if got := sink.Events()[0].Tenant; got != "acme" {
		t.Errorf("tenant %q, want acme", got)
	}
}

// TestTrackerKeysByContextEnvelope: a Tracker keys the resource set on the
// context, so two resources in two scopes are tracked apart.
func TestTrackerKeysByContextEnvelope(t *testing.T) {
	sink := progresstest.NewSink()
	tk := progress.NewTracker(sink.Recorder())
	tr := progress.Transition{Stream: progress.StreamLifecycle, Condition: progress.Condition{Status: "Running"}}
	for _, id := range []string{"a", "b", "a"} {
		ctx := progress.ContextWithEnvelope(context.Background(), progress.Envelope{Resource: progress.Resource{Type: "VM", ID: id}})
		if _, err := tk.Observe(ctx, tr); err != nil {
			t.Fatal(err)
		}
	}
	if st := tk.Stats(); st.Emitted != 2 || st.Suppressed != 1 || st.Tracked != 2 {
		t.Errorf("stats %+v, want 2 emitted, 1 suppressed, 2 tracked", st)
	}
}
