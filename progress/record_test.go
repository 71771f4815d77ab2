package progress_test

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/progress/wire"
	"github.com/progressotel/progressotel/propagation"
)

func attrsOf(t *testing.T, s *progresstest.Sink) map[string]attribute.Value {
	t.Helper()
	recs := s.Records()
	if len(recs) != 1 {
		t.Fatalf("got %d records, want 1", len(recs))
	}
	m := map[string]attribute.Value{}
	recs[0].WalkAttributes(func(kv attribute.KeyValue) bool {
		if _, dup := m[string(kv.Key)]; dup {
			t.Errorf("duplicate attribute %q", kv.Key)
		}
		m[string(kv.Key)] = kv.Value
		return true
	})
	return m
}

// TestRecordWireContract asserts the record attribute by attribute: this is
// what collector configs and TNCO rely on.
func TestRecordWireContract(t *testing.T) {
	sink := progresstest.NewSink()
	rec := sink.Recorder()
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("test").Start(context.Background(), "Install")
	err := rec.Record(ctx, progress.Event{
		Type: "ansible/TaskCompletedOnHost",
		Details: map[string]any{
			"taskName": "install nginx",
			"hostName": "web-1",
			"taskResult": map[string]any{
				"changed": true, "rc": 0, "msg": "ok",
				"results": []any{map[string]any{"item": "a"}, "b"},
			},
			"dotted.key": "kept apart",
		},
		Envelope: progress.Envelope{
			Component:          progress.Component{Name: "ansible-driver", Version: "1.2.3"},
			Resource:           progress.Resource{Type: "Network", ID: "net-1"},
			Scope:              map[string]string{"organization": "acme", "project": ""},
			ObservedGeneration: 4,
		},
	})
	span.End()
	if err != nil {
		t.Fatal(err)
	}
	r := sink.Records()[0]
	if r.EventName() != "ansible/TaskCompletedOnHost" {
		t.Errorf("EventName = %q", r.EventName())
	}
	if r.Severity() != log.SeverityInfo || r.SeverityText() != "INFO" {
		t.Errorf("severity = %v %q, want INFO", r.Severity(), r.SeverityText())
	}
	if got := r.InstrumentationScope().Name; got != wire.ScopeName {
		t.Errorf("scope = %q", got)
	}
	if r.TraceID() != span.SpanContext().TraceID() || r.SpanID() != span.SpanContext().SpanID() {
		t.Errorf("record not correlated to the active span")
	}
	if r.Timestamp().IsZero() {
		t.Errorf("timestamp not set")
	}
	a := attrsOf(t, sink)
	want := map[string]any{
		"progress.event_type":                 "ResourceTransitionProgressEvent",
		"progress.component.name":             "ansible-driver",
		"progress.component.version":          "1.2.3",
		"progress.resource.type":              "Network",
		"progress.resource.id":                "net-1",
		"progress.scope.organization":         "acme",
		"progress.tenant":                     "acme",
		"progress.observed_generation":        int64(4),
		"progress.sequence":                   int64(1),
		"progress.details.taskName":           "install nginx",
		"progress.details.hostName":           "web-1",
		"progress.details.taskResult.changed": true,
		"progress.details.taskResult.rc":      int64(0),
		"progress.details.taskResult.msg":     "ok",
		"progress.details.dotted%2Ekey":       "kept apart",
		"progress.details.taskResult.results": []any{map[string]any{"item": "a"}, "b"},
	}
	for k, v := range want {
		got, ok := a[k]
		if !ok {
			t.Errorf("missing attribute %s", k)
			continue
		}
		if !reflect.DeepEqual(progresstest.ValueOf(got), v) {
			t.Errorf("%s = %#v, want %#v", k, progresstest.ValueOf(got), v)
		}
	}
	if a["progress.details.taskResult.results"].Type() != attribute.SLICE {
		t.Errorf("slices must stay SLICE values")
	}
	if len(a) != len(want) {
		t.Errorf("got %d attributes, want %d: %v", len(a), len(want), a)
	}
	if _, ok := a["progress.scope.project"]; ok {
		t.Errorf("empty scope keys must be absent (present-only)")
	}
}

func TestRecordSeverityAndTenantFallback(t *testing.T) {
	sink := progresstest.NewSink()
	rec := sink.Recorder()
	ctx := propagation.ContextWithValues(context.Background(), mustValues(t, "tenantid", "t-9"))
	if err := rec.Record(ctx, progress.OperationFailed("Install", "INTERNAL_ERROR", "an unexpected error occurred")); err != nil {
		t.Fatal(err)
	}
	r := sink.Records()[0]
	if r.Severity() != log.SeverityError || r.SeverityText() != "ERROR" {
		t.Errorf("severity = %v %q", r.Severity(), r.SeverityText())
	}
	if got := attrsOf(t, sink)[wire.AttrTenant].AsString(); got != "t-9" {
		t.Errorf("tenant = %q, want tracectx tenantid fallback t-9", got)
	}
}

func TestRecordInvalidIsCountedNotEmitted(t *testing.T) {
	sink := progresstest.NewSink()
	rec := sink.Recorder()
	for _, typ := range []string{"", "TaskStarted", "a/b/c"} {
		err := rec.Record(context.Background(), progress.Event{Type: typ})
		if !errors.Is(err, progress.ErrInvalidEvent) || !strings.Contains(err.Error(), "progressEventType") {
			t.Errorf("Record(%q) = %v", typ, err)
		}
	}
	if n := len(sink.Records()); n != 0 {
		t.Errorf("%d invalid events emitted", n)
	}
	if st := rec.Stats(); st.Invalid != 3 || st.Recorded != 0 {
		t.Errorf("stats = %+v", st)
	}
}

func TestRecordEdgeCasesNeverPanic(t *testing.T) {
	sink := progresstest.NewSink()
	rec := sink.Recorder()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	ch := make(chan int)
	type node struct {
		Name string `json:"name"`
		Next *node  `json:"next"`
	}
	cyc := &node{Name: "a"}
	cyc.Next = cyc
	cycMap := map[string]any{}
	cycMap["self"] = cycMap
	cases := []struct {
		name string
		ctx  context.Context
		evt  progress.Event
	}{
		{"nil ctx", nil, progress.Event{Type: "common/X"}}, //nolint:staticcheck // documented: nil is Background
		{"cancelled ctx", cancelled, progress.Event{Type: "common/X"}},
		{"nil details map", context.Background(), progress.Event{Type: "common/X", Details: map[string]any(nil)}},
		{"chan and func", context.Background(), progress.Event{Type: "common/X", Details: map[string]any{"c": ch, "f": func() {}, "z": complex(1, 2)}}},
		{"NaN", context.Background(), progress.Event{Type: "common/X", Details: map[string]any{"n": math.NaN(), "i": math.Inf(-1)}}},
		{"struct cycle", context.Background(), progress.Event{Type: "common/X", Details: cyc}},
		{"map cycle", context.Background(), progress.Event{Type: "common/X", Details: cycMap}},
		{"scalar details", context.Background(), progress.Event{Type: "common/X", Details: "just text"}},
		{"typed nil pointer", context.Background(), progress.Event{Type: "common/X", Details: (*node)(nil)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sink.Reset()
			if err := rec.Record(c.ctx, c.evt); err != nil {
				t.Fatal(err)
			}
			if len(sink.Records()) != 1 {
				t.Fatalf("want one record")
			}
		})
	}
	// Zero-value Event: an error, not a panic.
	if err := rec.Record(context.Background(), progress.Event{}); !errors.Is(err, progress.ErrInvalidEvent) {
		t.Errorf("zero Event: %v", err)
	}
}

func TestFallbacksAreDocumentedValues(t *testing.T) {
	type node struct {
		Name string `json:"name"`
		Next *node  `json:"next"`
	}
	cyc := &node{Name: "a"}
	cyc.Next = cyc
	attrs, truncated := progresstest.Flatten(map[string]any{
		"c": make(chan int), "n": math.NaN(), "p": math.Inf(1), "u": uint64(math.MaxUint64), "cyc": cyc,
	})
	if !truncated {
		t.Errorf("unsupported values must count as truncation")
	}
	got := map[string]any{}
	for _, kv := range attrs {
		got[string(kv.Key)] = progresstest.ValueOf(kv.Value)
	}
	want := map[string]any{
		"progress.details.c": "[unsupported: chan int]",
		"progress.details.n": "NaN",
		"progress.details.p": "+Inf",
		"progress.details.u": "18446744073709551615",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
	deep := false
	for k, v := range got {
		if strings.HasPrefix(k, "progress.details.cyc.") && v == wire.TruncatedDepth {
			deep = true
		}
	}
	if !deep {
		t.Errorf("a cycle must stop at MaxDepth with %q: %v", wire.TruncatedDepth, got)
	}
}

func mustValues(t *testing.T, kv ...string) propagation.Values {
	t.Helper()
	ctx := context.Background()
	for i := 0; i+1 < len(kv); i += 2 {
		var err error
		ctx, err = propagation.WithValue(ctx, kv[i], kv[i+1])
		if err != nil {
			t.Fatal(err)
		}
	}
	return propagation.FromContext(ctx)
}

// Without a span, sequence numbers count per resource: same-named
// resources in two namespaces each start at 1 and stay contiguous.
func TestSequencePerResourceWithoutSpan(t *testing.T) {
	sink := progresstest.NewSink()
	rec := sink.Recorder()
	for range 2 {
		for _, ns := range []string{"team-a", "team-b"} {
			evt := progress.Event{Type: "kubernetes/ObjectUpdated", Envelope: progress.Envelope{
				Resource: progress.Resource{Type: "Cluster", Namespace: ns, ID: "db"}}}
			if err := rec.Record(context.Background(), evt); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := map[string][]int64{}
	for _, ev := range sink.Events() {
		got[ev.Resource.Namespace] = append(got[ev.Resource.Namespace], ev.Sequence)
	}
	for _, ns := range []string{"team-a", "team-b"} {
		if !reflect.DeepEqual(got[ns], []int64{1, 2}) {
			t.Errorf("%s: sequence %v, want [1 2]", ns, got[ns])
		}
	}
}

// Past the bound of the per-stream key cache, transitions are still written
// and decoded correctly.
func TestManyStreams(t *testing.T) {
	sink := progresstest.NewSink()
	rec := sink.Recorder()
	const n = 300
	for i := range n {
		stream := "s" + strconv.Itoa(i)
		if err := rec.RecordTransition(context.Background(), progress.Transition{Stream: stream, Condition: progress.Condition{Status: "True", Reason: stream}}); err != nil {
			t.Fatal(err)
		}
	}
	evs := sink.Events()
	if len(evs) != n {
		t.Fatalf("%d events", len(evs))
	}
	for i, ev := range evs {
		if want := "s" + strconv.Itoa(i); ev.Transition.Stream != want || ev.Transition.Reason != want || ev.Transition.Status != "True" {
			t.Fatalf("event %d: %+v", i, ev.Transition)
		}
	}
}
