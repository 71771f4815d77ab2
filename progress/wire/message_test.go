package wire_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/testkit/wiretest"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/progress/wire"
)

// TestGoldenMessage: AppendMessage on every record of the wire corpus.
func TestGoldenMessage(t *testing.T) {
	wiretest.Check(t, "message", func(t *testing.T, r *sdklog.Record) string {
		b, ok := wire.AppendMessage(nil, r)
		if !ok {
			return "none"
		}
		return string(b)
	})
}

// referenceMessage builds the TNCO message of r as docs/collector.md lays
// it out, apart from the builder (tncomessage), as Go values: the details
// nested back by Decode, everything else from the attributes, values as the
// OTLP hop and pdata's AsRaw leave them. encoding/json of the result is
// what the kafka exporter wrote.
func referenceMessage(r *sdklog.Record) (map[string]any, bool) {
	attrs := map[string]attribute.Value{}
	var order []string
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		if _, seen := attrs[string(kv.Key)]; !seen {
			order = append(order, string(kv.Key))
		}
		attrs[string(kv.Key)] = kv.Value
		return true
	})
	et, ok := attrs[wire.AttrEventType]
	if !ok || (et.AsString() != wire.EventType && et.AsString() != wire.TransitionEventType) {
		return nil, false
	}
	name := r.EventName()
	m := map[string]any{"eventType": et.AsString(), "progressEventType": name}
	val := func(k string) (any, bool) {
		v, ok := attrs[k]
		if !ok {
			return nil, false
		}
		return progresstest.ValueOf(v), true
	}
	if et.AsString() == wire.EventType {
		d, err := wire.Decode(r)
		if err != nil {
			return nil, false
		}
		m["details"] = d.Details
	} else {
		p := "progress." + name + "."
		st, _ := val(p + "status")
		re, _ := val(p + "reason")
		d := map[string]any{"status": st, "reason": re}
		if msg, ok := val(p + "message"); ok {
			d["message"] = msg
		}
		if ps, ok := val(p + "previous.status"); ok {
			pr, _ := val(p + "previous.reason")
			prev := map[string]any{"status": ps, "reason": pr}
			if pm, ok := val(p + "previous.message"); ok {
				prev["message"] = pm
			}
			d["previous"] = prev
		}
		m["details"] = d
	}
	for key, attr := range map[string]string{"tenant": wire.AttrTenant, "observedGeneration": wire.AttrObservedGeneration,
		"sequence": wire.AttrSequence, "truncated": wire.AttrTruncated} {
		if v, ok := val(attr); ok {
			m[key] = v
		}
	}
	for key, prefix := range map[string]string{"resource": "progress.resource.", "component": "progress.component.", "scope": "progress.scope."} {
		sub := map[string]any{}
		for _, k := range order {
			if strings.HasPrefix(k, prefix) {
				sub[k[len(prefix):]] = progresstest.ValueOf(attrs[k])
			}
		}
		if len(sub) > 0 {
			m[key] = sub
		}
	}
	if ns := r.Timestamp().UnixNano(); !r.Timestamp().IsZero() && ns > 0 {
		m["@timestamp"] = time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000Z")
	}
	if s := r.SeverityText(); s != "" {
		m["level"] = s
	}
	if tid := r.TraceID(); tid.IsValid() {
		m["traceId"] = tid.String()
	}
	if sid := r.SpanID(); sid.IsValid() {
		m["spanId"] = sid.String()
	}
	for _, k := range order {
		if strings.HasPrefix(k, "tracectx.") {
			m[k] = progresstest.ValueOf(attrs[k])
		}
	}
	return m, true
}

// The message is byte for byte what encoding/json writes for the message
// the collector used to build, for every record of the corpus.
func TestMessageMatchesTheCollectorsRules(t *testing.T) {
	for _, r := range wiretest.Records(t) {
		got, ok := wire.AppendMessage(nil, &r.Record)
		ref, refOK := referenceMessage(&r.Record)
		if ok != refOK {
			t.Errorf("%s: AppendMessage %v, reference %v", r.Case, ok, refOK)
			continue
		}
		if !ok {
			continue
		}
		want, err := json.Marshal(ref)
		if err != nil {
			t.Fatalf("%s: %v", r.Case, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", r.Case, got, want)
		}
	}
}

// Values the corpus does not hold, through the same comparison: strings
// encoding/json escapes, keys that sort differently escaped and unescaped,
// maps with repeated keys, every slice type, bytes, no time, no trace.
func TestMessageEncodesLikeEncodingJSON(t *testing.T) {
	sink := progresstest.NewSink()
	l := sink.LoggerProvider().Logger(wire.ScopeName)
	weird := "<a href=\"x\">&amp;</a>\u2028\u2029\x00\x1f\x7f\b\f\n\r\t\\ é 日本 \xff\xfe"
	var r otellog.Record
	r.SetEventName("test/Weird")
	r.SetSeverityText("WARN")
	r.AddAttributes(
		attribute.String(wire.AttrEventType, wire.EventType),
		attribute.String("progress.details.s", weird),
		attribute.String("progress.details.a%2Eb", "dotted"),
		attribute.String("progress.details.a-b", "dash"),
		attribute.String("progress.details.a", "leaf"),
		attribute.Int64("progress.details.n.x", math.MaxInt64),
		attribute.Float64("progress.details.n.f", 1e21),
		attribute.Float64("progress.details.n.g", 1e-7),
		attribute.Float64("progress.details.n.h", math.Copysign(0, -1)),
		attribute.StringSlice("progress.details.l.s", []string{weird, ""}),
		attribute.Int64Slice("progress.details.l.i", []int64{1, -2}),
		attribute.Float64Slice("progress.details.l.f", []float64{0.5, 3}),
		attribute.BoolSlice("progress.details.l.b", []bool{true}),
		attribute.ByteSlice("progress.details.l.bytes", []byte{0, 1, 2, 250}),
		attribute.KeyValue{Key: "progress.details.m", Value: attribute.MapValue(
			attribute.String("z", "1"), attribute.String("b", "2"), attribute.String("z", "3"),
			attribute.KeyValue{Key: "e", Value: attribute.Value{}})},
		attribute.String("progress.scope.org%2Ex", "acme"),
		attribute.String("progress.scope.b", "2"),
		attribute.String("tracectx.zeta", "z"),
		attribute.String("tracectx.alpha", weird),
		attribute.String("progress.component.extra", "x"),
		attribute.Int64("progress.tenant", 7), // not a string: written as it is
	)
	l.Emit(context.Background(), r)
	recs := sink.Records()
	got, ok := wire.AppendMessage(nil, &recs[0])
	if !ok {
		t.Fatal("not a progress record")
	}
	ref, _ := referenceMessage(&recs[0])
	want, err := json.Marshal(ref)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	if strings.Contains(string(got), "@timestamp") || strings.Contains(string(got), "traceId") {
		t.Errorf("no time and no span: no @timestamp, traceId: %s", got)
	}
}

// Timestamps have three millisecond digits, cut, not rounded, in UTC.
func TestMessageTimestamp(t *testing.T) {
	sink := progresstest.NewSink()
	rec := sink.Recorder()
	zone := time.FixedZone("UTC+5", 5*3600)
	for _, ts := range []time.Time{
		time.Date(2026, 11, 29, 10, 0, 5, 0, time.UTC),
		time.Date(2026, 11, 29, 10, 0, 5, 120_000_000, time.UTC),
		time.Date(2026, 11, 29, 10, 0, 5, 999_999_999, time.UTC),
		time.Date(2026, 11, 29, 15, 0, 5, 1_000_000, zone),
	} {
		if err := rec.Record(context.Background(), progress.Event{Type: "a/B", Time: ts}); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"2026-11-29T10:00:05.000Z", "2026-11-29T10:00:05.120Z", "2026-11-29T10:00:05.999Z", "2026-11-29T10:00:05.001Z"}
	for i, r := range sink.Records() {
		b, _ := wire.AppendMessage(nil, &r)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if m["@timestamp"] != want[i] {
			t.Errorf("@timestamp = %v, want %s", m["@timestamp"], want[i])
		}
	}
}

// A transition's message, with and without the previous condition.
func TestMessageTransition(t *testing.T) {
	sink := progresstest.NewSink()
	rec := sink.Recorder()
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled}))
	env := progress.Envelope{Scope: map[string]string{"tenant": "t1"}}
	ts := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	if err := rec.RecordTransition(ctx, progress.Transition{Stream: "provisioning", Time: ts, Envelope: env,
		Condition: progress.Condition{Status: "True", Reason: "Provisioned", Message: "ready"},
		Previous:  &progress.Condition{Status: "False", Reason: "Provisioning"}}); err != nil {
		t.Fatal(err)
	}
	if err := rec.RecordTransition(ctx, progress.Transition{Stream: "lifecycle", Time: ts,
		Condition: progress.Condition{Status: "Running", Reason: "Started"}}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"@timestamp":"2026-11-29T10:00:00.000Z","details":{"message":"ready","previous":{"reason":"Provisioning","status":"False"},"reason":"Provisioned","status":"True"},"eventType":"ConditionTransition","level":"INFO","progressEventType":"provisioning","scope":{"tenant":"t1"},"sequence":1,"spanId":"0200000000000000","tenant":"t1","traceId":"01000000000000000000000000000000"}`,
		`{"@timestamp":"2026-11-29T10:00:00.000Z","details":{"reason":"Started","status":"Running"},"eventType":"ConditionTransition","level":"INFO","progressEventType":"lifecycle","sequence":2,"spanId":"0200000000000000","traceId":"01000000000000000000000000000000"}`,
	}
	for i, r := range sink.Records() {
		b, ok := wire.AppendMessage(nil, &r)
		if !ok || string(b) != want[i] {
			t.Errorf("transition %d:\n got %s\nwant %s", i, b, want[i])
		}
		ref, _ := referenceMessage(&r)
		if w, _ := json.Marshal(ref); !bytes.Equal(b, w) {
			t.Errorf("transition %d differs from the reference:\n got %s\nwant %s", i, b, w)
		}
	}
}

func BenchmarkAppendMessage(b *testing.B) {
	sink := progresstest.NewSink()
	rec := sink.Recorder()
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled}))
	err := rec.Record(ctx, progress.Event{Type: "ansible/TaskCompletedOnHost", Details: map[string]any{
		"taskName": "Install packages", "itemLabel": "nginx", "hostName": "web-1", "delegatedHostName": "bastion-01",
		"taskResult": map[string]any{"msg": "All items completed", "changed": true, "failed": false, "rc": 0,
			"timing": map[string]any{"startMs": int64(1764432000123), "durationMs": int64(42)}},
	}, Envelope: progress.Envelope{Component: progress.Component{Name: "ansible-driver", Version: "3.2.1"},
		Resource: progress.Resource{Type: "AssemblyInstance", ID: "asm-1"}, Scope: map[string]string{"organization": "acme"}}})
	if err != nil {
		b.Fatal(err)
	}
	r := sink.Records()[0]
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = wire.AppendMessage(buf[:0], &r)
	}
	b.SetBytes(int64(len(buf)))
}
