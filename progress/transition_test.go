package progress_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/progress/wire"
)

// newTrRecorder returns a Recorder emitting into a fresh progresstest
// sink. The sequence attribute is left on: parity must hold with the
// defaults.
func newTrRecorder(t testing.TB) (*progress.Recorder, *progresstest.Sink) {
	t.Helper()
	s := progresstest.NewSink()
	t.Cleanup(func() { _ = s.LoggerProvider().Shutdown(context.Background()) })
	return s.Recorder(), s
}

func trAttrs(r *sdklog.Record) map[string]attribute.Value {
	m := map[string]attribute.Value{}
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		m[string(kv.Key)] = kv.Value
		return true
	})
	return m
}

func trDecode(t testing.TB, r *sdklog.Record) wire.Decoded {
	t.Helper()
	d, err := wire.Decode(r)
	if err != nil {
		t.Fatalf("Decode(%s): %v", r.EventName(), err)
	}
	if d.Transition == nil {
		t.Fatalf("Decode(%s): no transition", r.EventName())
	}
	return d
}

var trEnvelope = progress.Envelope{
	Component: progress.Component{Name: "compute.unikorn-cloud.org", Version: "1.4.0"},
	Resource:  progress.Resource{Type: "ComputeCluster", ID: "cluster-a", Namespace: "org-acme", UID: "5f0c6a1e"},
	Scope:     map[string]string{"organization": "acme", "project": "web"},

	ObservedGeneration: 7,
}

func TestTransitionSelectedByEventName(t *testing.T) {
	rec, sink := newTrRecorder(t)
	ctx := context.Background()
	sent := []progress.Transition{
		{Stream: progress.StreamProvisioning, Condition: progress.Condition{Status: "False", Reason: "Provisioning", Message: "creating"}, Envelope: trEnvelope},
		{Stream: progress.StreamLifecycle, Condition: progress.Condition{Status: "False", Reason: "Pending"}, Envelope: trEnvelope},
		{Stream: "health", Condition: progress.Condition{Status: "True", Reason: "Healthy"}, Envelope: trEnvelope},
		{Stream: progress.StreamProvisioning, Condition: progress.Condition{Status: "True", Reason: "Provisioned"}, Envelope: trEnvelope},
	}
	for _, tr := range sent {
		if err := rec.RecordTransition(ctx, tr); err != nil {
			t.Fatal(err)
		}
	}
	recs := sink.Records()
	if len(recs) != len(sent) {
		t.Fatalf("got %d records, want %d", len(recs), len(sent))
	}
	// A pipeline subscribes to one axis with one condition on EventName.
	var provisioning []string
	for i := range recs {
		r := &recs[i]
		if r.EventName() != sent[i].Stream {
			t.Errorf("record %d: EventName %q, want %q", i, r.EventName(), sent[i].Stream)
		}
		if got := r.Body().AsString(); got != sent[i].Stream {
			t.Errorf("record %d: Body %q, want the stream %q", i, got, sent[i].Stream)
		}
		a := trAttrs(r)
		if got := a[wire.AttrEventType].AsString(); got != wire.TransitionEventType {
			t.Errorf("record %d: %s = %q", i, wire.AttrEventType, got)
		}
		// The payload sits under the stream's own key and no other.
		for k := range a {
			for _, other := range []string{"provisioning", "lifecycle", "health"} {
				if other != sent[i].Stream && strings.HasPrefix(k, "progress."+other+".") {
					t.Errorf("record %d on %s carries %s", i, sent[i].Stream, k)
				}
			}
		}
		if got := a["progress."+sent[i].Stream+".reason"].AsString(); got != sent[i].Reason {
			t.Errorf("record %d: reason %q, want %q", i, got, sent[i].Reason)
		}
		if r.EventName() == progress.StreamProvisioning {
			provisioning = append(provisioning, a["progress.provisioning.reason"].AsString())
		}
	}
	if want := []string{"Provisioning", "Provisioned"}; !slices.Equal(provisioning, want) {
		t.Errorf("provisioning stream = %v, want %v", provisioning, want)
	}
}

// envelopeShape returns the record's attribute names with the stream's
// payload key replaced by <stream>, and the values of the envelope.
func envelopeShape(r *sdklog.Record) (names []string, env map[string]string) {
	env = map[string]string{}
	prefix := "progress." + r.EventName() + "."
	for k, v := range trAttrs(r) {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			names = append(names, "progress.<stream>."+rest)
			continue
		}
		names = append(names, k)
		if k != wire.AttrSequence {
			env[k] = v.String()
		}
	}
	slices.Sort(names)
	return names, env
}

func TestTransitionEnvelopeParity(t *testing.T) {
	ctx := context.Background()
	prev := &progress.Condition{Status: "Unknown", Reason: "Pending", Message: "waiting"}
	cond := progress.Condition{Status: "True", Reason: "Ready", Message: "all good"}
	var (
		firstNames []string
		firstEnv   map[string]string
	)
	for _, stream := range []string{progress.StreamProvisioning, progress.StreamLifecycle, "health"} {
		rec, sink := newTrRecorder(t)
		if err := rec.RecordTransition(ctx, progress.Transition{Stream: stream, Condition: cond, Previous: prev, Envelope: trEnvelope}); err != nil {
			t.Fatal(err)
		}
		recs := sink.Records()
		if len(recs) != 1 {
			t.Fatalf("%s: %d records", stream, len(recs))
		}
		names, env := envelopeShape(&recs[0])
		if firstNames == nil {
			firstNames, firstEnv = names, env
			continue
		}
		if !slices.Equal(names, firstNames) {
			t.Errorf("%s: attribute names\n%v\nwant (as provisioning)\n%v", stream, names, firstNames)
		}
		if !maps.Equal(env, firstEnv) {
			t.Errorf("%s: envelope %v, want (as provisioning) %v", stream, env, firstEnv)
		}
	}
	want := map[string]string{
		wire.AttrEventType:                wire.TransitionEventType,
		wire.AttrComponentName:            "compute.unikorn-cloud.org",
		wire.AttrComponentVersion:         "1.4.0",
		wire.AttrResourceType:             "ComputeCluster",
		wire.AttrResourceID:               "cluster-a",
		wire.AttrResourceNamespace:        "org-acme",
		wire.AttrResourceUID:              "5f0c6a1e",
		wire.ScopePrefix + "organization": "acme",
		wire.ScopePrefix + "project":      "web",
		wire.AttrObservedGeneration:       "7",
		wire.AttrTenant:                   "acme",
	}
	if !maps.Equal(firstEnv, want) {
		t.Errorf("envelope\n%v\nwant\n%v", firstEnv, want)
	}

	// The envelope is the one progress events carry too.
	rec, sink := newTrRecorder(t)
	if err := rec.Record(ctx, progress.Event{Type: progress.TypeProgress, Envelope: trEnvelope}); err != nil {
		t.Fatal(err)
	}
	evs := sink.Records()
	_, evEnv := envelopeShape(&evs[0])
	for k, v := range want {
		if k == wire.AttrEventType {
			continue
		}
		if evEnv[k] != v {
			t.Errorf("progress event: %s = %q, want %q as on transitions", k, evEnv[k], v)
		}
	}
}

func TestTransitionScopeIsPresentOnly(t *testing.T) {
	rec, sink := newTrRecorder(t)
	env := trEnvelope
	env.Scope = map[string]string{"organization": "acme", "project": ""}
	if err := rec.RecordTransition(context.Background(), progress.Transition{
		Stream: progress.StreamLifecycle, Condition: progress.Condition{Status: "True", Reason: "Running"}, Envelope: env,
	}); err != nil {
		t.Fatal(err)
	}
	recs := sink.Records()
	a := trAttrs(&recs[0])
	if _, ok := a[wire.ScopePrefix+"project"]; ok {
		t.Error("an organization-scoped resource carries a project key")
	}
	if got := a[wire.ScopePrefix+"organization"].AsString(); got != "acme" {
		t.Errorf("organization = %q", got)
	}
	if d := trDecode(t, &recs[0]); !maps.Equal(d.Scope, map[string]string{"organization": "acme"}) {
		t.Errorf("decoded scope %v", d.Scope)
	}
}

func TestTransitionPreviousFields(t *testing.T) {
	rec, sink := newTrRecorder(t)
	ctx := context.Background()
	tr := progress.Transition{Stream: progress.StreamLifecycle, Condition: progress.Condition{Status: "False", Reason: "Pending"}}
	if err := rec.RecordTransition(ctx, tr); err != nil {
		t.Fatal(err)
	}
	first := tr.Condition
	tr.Previous = &first
	tr.Condition = progress.Condition{Status: "True", Reason: "Running", Message: "the server is running"}
	if err := rec.RecordTransition(ctx, tr); err != nil {
		t.Fatal(err)
	}
	tr.Previous = &progress.Condition{Status: "True", Reason: "Running", Message: "the server is running"}
	tr.Condition = progress.Condition{Status: "False", Reason: "Stopped"}
	if err := rec.RecordTransition(ctx, tr); err != nil {
		t.Fatal(err)
	}

	recs := sink.Records()
	firstAttrs := trAttrs(&recs[0])
	for k := range firstAttrs {
		if strings.Contains(k, ".previous.") {
			t.Errorf("first transition carries %s", k)
		}
	}
	if _, ok := firstAttrs["progress.lifecycle.message"]; ok {
		t.Error("an empty message is written")
	}

	second := trAttrs(&recs[1])
	for k, v := range map[string]string{
		"progress.lifecycle.status": "True", "progress.lifecycle.reason": "Running",
		"progress.lifecycle.message":         "the server is running",
		"progress.lifecycle.previous.status": "False", "progress.lifecycle.previous.reason": "Pending",
	} {
		if got := second[k].AsString(); got != v {
			t.Errorf("second: %s = %q, want %q", k, got, v)
		}
	}
	if _, ok := second["progress.lifecycle.previous.message"]; ok {
		t.Error("an empty previous message is written")
	}
	third := trAttrs(&recs[2])
	if got := third["progress.lifecycle.previous.message"].AsString(); got != "the server is running" {
		t.Errorf("third: previous.message = %q", got)
	}
}

func TestTransitionDecodeRoundTrip(t *testing.T) {
	rec, sink := newTrRecorder(t)
	want := progress.Transition{
		Stream:    "health",
		Condition: progress.Condition{Status: "False", Reason: "Degraded", Message: "2 of 3 nodes are ready"},
		Previous:  &progress.Condition{Status: "True", Reason: "Healthy", Message: "all nodes are ready"},
		Envelope:  trEnvelope,
	}
	if err := rec.RecordTransition(context.Background(), want); err != nil {
		t.Fatal(err)
	}
	recs := sink.Records()
	d := trDecode(t, &recs[0])
	got := d.Transition
	if got.Stream != want.Stream || got.Condition != want.Condition {
		t.Errorf("decoded %+v, want %+v", *got, want)
	}
	if got.Previous == nil || *got.Previous != *want.Previous {
		t.Errorf("decoded previous %v, want %v", got.Previous, *want.Previous)
	}
	if d.Component != want.Component || d.Resource != want.Resource || d.ObservedGeneration != want.ObservedGeneration ||
		!maps.Equal(d.Scope, want.Scope) || d.Tenant != "acme" {
		t.Errorf("decoded envelope %+v tenant %q, want %+v", d.Envelope, d.Tenant, want.Envelope)
	}
	if d.EventType != wire.TransitionEventType || d.Details != nil || len(d.Extra) != 0 {
		t.Errorf("decoded type %q details %v extra %v", d.EventType, d.Details, d.Extra)
	}

	// Without a previous state, none is decoded.
	want.Previous = nil
	if err := rec.RecordTransition(context.Background(), want); err != nil {
		t.Fatal(err)
	}
	recs = sink.Records()
	if d := trDecode(t, &recs[1]); d.Transition.Previous != nil {
		t.Errorf("decoded previous %v for a first transition", *d.Transition.Previous)
	}
}

func TestTransitionInvalidIsNotEmitted(t *testing.T) {
	rec, sink := newTrRecorder(t)
	ctx := context.Background()
	for _, tr := range []progress.Transition{
		{Stream: "", Condition: progress.Condition{Status: "True"}},
		{Stream: "Provisioning", Condition: progress.Condition{Status: "True"}},
		{Stream: "scope", Condition: progress.Condition{Status: "True"}},
		{Stream: "provisioning"},
	} {
		if err := rec.RecordTransition(ctx, tr); !errors.Is(err, progress.ErrInvalidEvent) {
			t.Errorf("RecordTransition(%q, %+v) = %v, want ErrInvalidEvent", tr.Stream, tr.Condition, err)
		}
	}
	if n := len(sink.Records()); n != 0 {
		t.Errorf("%d invalid transitions emitted", n)
	}
	if got := rec.Stats().Invalid; got != 4 {
		t.Errorf("Stats().Invalid = %d, want 4", got)
	}
}
