package prettyexporter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/log/logtest"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/prettyexporter"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

func newJSON(t testing.TB, opts ...prettyexporter.Option) (*prettyexporter.JSONExporter, *testutil.SyncBuffer) {
	t.Helper()
	var buf testutil.SyncBuffer
	exp, err := prettyexporter.NewJSON(append([]prettyexporter.Option{prettyexporter.WithWriter(&buf)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return exp, &buf
}

// richDetails covers nesting, slices (of scalars and of maps), a key that
// contains the separator, an empty map and every scalar type.
func richDetails() map[string]any {
	return map[string]any{
		"taskName":   "Install nginx",
		"argsHidden": false,
		"args":       map[string]any{"name": "nginx", "state": "present", "opts": map[string]any{"retries": 3}},
		"hosts":      []any{"web-1", "web-2"},
		"plays":      []any{map[string]any{"play": map[string]any{"name": "site", "id": "p-1"}}},
		"ratio":      0.25,
		"big":        int64(1) << 60,
		"a.b":        "dotted key",
		"100%":       "percent key",
		"empty":      map[string]any{},
		"none":       nil,
		"rc":         0,
	}
}

func TestJSONProgressEvent(t *testing.T) {
	exp, buf := newJSON(t)
	h := newHarness(t, exp)
	ctx, span := h.span(t)
	ts := time.Date(2026, 11, 29, 14, 3, 7, 412000001, time.FixedZone("CET", 3600))
	evt := progress.Event{
		Type:     "ansible/TaskStarted",
		Details:  richDetails(),
		Severity: log.SeverityWarn,
		Time:     ts,
		Envelope: progress.Envelope{
			Component:          progress.Component{Name: "ansible-driver", Version: "1.2.3"},
			Resource:           progress.Resource{Type: "Play", ID: "site.yml", Namespace: "ns-1", UID: "u-1"},
			Scope:              map[string]string{"organization": "acme", "project": "p1"},
			ObservedGeneration: 4,
		},
	}
	if err := h.rec.Record(ctx, evt); err != nil {
		t.Fatal(err)
	}
	objs := parseLines(t, buf.String())
	if len(objs) != 1 {
		t.Fatalf("want 1 line, got %d: %s", len(objs), buf.String())
	}
	got := objs[0]
	sc := span.SpanContext()
	if !strings.Contains(buf.String(), `"scope":{"organization":"acme","project":"p1"}`) {
		t.Errorf("scope keys not sorted: %s", buf.String())
	}
	want := map[string]any{
		"@timestamp":             "2026-11-29T13:03:07.412Z",
		"@version":               "1",
		"level":                  "WARN",
		"logger_name":            wire.ScopeName,
		"message":                "ansible/TaskStarted",
		"eventType":              "ResourceTransitionProgressEvent",
		"progressEventType":      "ansible/TaskStarted",
		"details":                jsonNormal(t, richDetails()),
		"traceId":                sc.TraceID().String(),
		"spanId":                 sc.SpanID().String(),
		"tracectx.transactionid": "tx-1",
		"tracectx.processid":     "p-9",
		"component":              map[string]any{"name": "ansible-driver", "version": "1.2.3"},
		"resource":               map[string]any{"type": "Play", "id": "site.yml", "namespace": "ns-1", "uid": "u-1"},
		"scope":                  map[string]any{"organization": "acme", "project": "p1"},
		"tenant":                 "acme",
		"observedGeneration":     4.0,
		"sequence":               1.0,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("JSON line\n got %v\nwant %v", got, want)
	}

	// The details are exactly what wire.Decode reads from the record.
	recs := h.kept.Records()
	d, err := wire.Decode(&recs[0])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got["details"], jsonNormal(t, d.Details)) {
		t.Errorf("details differ from wire.Decode:\n got %v\nwant %v", got["details"], jsonNormal(t, d.Details))
	}
}

func TestJSONFieldOrder(t *testing.T) {
	// Log shippers and people read the line left to right: time, level,
	// then the seed schema.
	exp, buf := newJSON(t)
	h := newHarness(t, exp)
	ctx, _ := h.span(t)
	if err := h.rec.Record(ctx, progress.Progress(2, 5, "tasks")); err != nil {
		t.Fatal(err)
	}
	line := buf.String()
	order := []string{`"@timestamp"`, `"@version"`, `"level"`, `"logger_name"`, `"message"`, `"eventType"`,
		`"progressEventType"`, `"details"`, `"traceId"`, `"spanId"`, `"tracectx.processid"`, `"tracectx.transactionid"`, `"sequence"`}
	last := -1
	for _, k := range order {
		i := strings.Index(line, k)
		if i <= last {
			t.Fatalf("%s out of order in %s", k, line)
		}
		last = i
	}
}

func TestJSONTransition(t *testing.T) {
	exp, buf := newJSON(t)
	h := newHarness(t, exp)
	ctx, span := h.span(t)
	env := progress.Envelope{
		Component: progress.Component{Name: "region"},
		Resource:  progress.Resource{Type: "Cluster", ID: "foo"},
		Scope:     map[string]string{"organization": "acme"},
	}
	if err := h.rec.RecordTransition(ctx, progress.Transition{
		Stream: progress.StreamProvisioning, Condition: progress.Condition{Status: "False", Reason: "Provisioning"}, Envelope: env,
	}); err != nil {
		t.Fatal(err)
	}
	if err := h.rec.RecordTransition(ctx, progress.Transition{
		Stream:    progress.StreamProvisioning,
		Condition: progress.Condition{Status: "True", Reason: "Provisioned", Message: "ready"},
		Previous:  &progress.Condition{Status: "False", Reason: "Provisioning", Message: "waiting"},
		Envelope:  env,
	}); err != nil {
		t.Fatal(err)
	}
	objs := parseLines(t, buf.String())
	if len(objs) != 2 {
		t.Fatalf("want 2 lines, got %d", len(objs))
	}
	for i, o := range objs {
		for k, want := range map[string]any{
			"eventType": "ConditionTransition", "stream": "provisioning", "message": "provisioning",
			"level": "INFO", "traceId": span.SpanContext().TraceID().String(), "tracectx.transactionid": "tx-1",
			"component": map[string]any{"name": "region"}, "resource": map[string]any{"type": "Cluster", "id": "foo"},
			"scope": map[string]any{"organization": "acme"}, "tenant": "acme", "sequence": float64(i + 1),
		} {
			if !reflect.DeepEqual(o[k], want) {
				t.Errorf("line %d: %s = %#v, want %#v", i, k, o[k], want)
			}
		}
		if _, ok := o["progressEventType"]; ok {
			t.Errorf("line %d: a transition has no progressEventType", i)
		}
	}
	if got, want := objs[0]["provisioning"], map[string]any{"status": "False", "reason": "Provisioning"}; !reflect.DeepEqual(got, want) {
		t.Errorf("first transition payload = %v, want %v (no message, no previous)", got, want)
	}
	want := map[string]any{"status": "True", "reason": "Provisioned", "message": "ready",
		"previous": map[string]any{"status": "False", "reason": "Provisioning", "message": "waiting"}}
	if got := objs[1]["provisioning"]; !reflect.DeepEqual(got, want) {
		t.Errorf("second transition payload = %v, want %v", got, want)
	}
}

func TestJSONOrdinaryLog(t *testing.T) {
	exp, buf := newJSON(t)
	h := newHarness(t, exp)
	ctx, span := h.span(t)
	logger := slog.New(otelslog.NewHandler("example.com/driver", otelslog.WithLoggerProvider(h.lp)))
	logger.ErrorContext(ctx, "connect failed", "host", "db-1", "port", 5432, slog.Group("retry", "n", 2, "backoff", "1s"))
	logger.Info("no span here") // context.Background: no ids, no tracectx

	objs := parseLines(t, buf.String())
	if len(objs) != 2 {
		t.Fatalf("want 2 lines, got %d", len(objs))
	}
	got := objs[0]
	ts, ok := got["@timestamp"].(string)
	if _, err := time.Parse(time.RFC3339Nano, ts); !ok || err != nil || !strings.HasSuffix(ts, "Z") {
		t.Errorf("@timestamp %v is not RFC 3339 UTC", got["@timestamp"])
	}
	delete(got, "@timestamp")
	want := map[string]any{
		"@version": "1", "level": "ERROR", "logger_name": "example.com/driver", "message": "connect failed",
		"traceId": span.SpanContext().TraceID().String(), "spanId": span.SpanContext().SpanID().String(),
		"tracectx.transactionid": "tx-1", "tracectx.processid": "p-9",
		"attributes": map[string]any{"host": "db-1", "port": 5432.0, "retry": map[string]any{"n": 2.0, "backoff": "1s"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ordinary log\n got %v\nwant %v", got, want)
	}
	for _, k := range []string{"traceId", "spanId", "attributes", "eventType", "tracectx.transactionid"} {
		if _, ok := objs[1][k]; ok {
			t.Errorf("log without span or attributes has %q: %v", k, objs[1])
		}
	}
	if objs[1]["message"] != "no span here" || objs[1]["level"] != "INFO" {
		t.Errorf("second log = %v", objs[1])
	}
}

func TestJSONHandBuiltRecords(t *testing.T) {
	// Records not built by package progress: paths out of order, a leaf
	// that a later path runs through, a repeated key, odd escapes, values
	// JSON cannot hold. The details still come out as wire.Decode
	// reads them, and every line is valid JSON.
	attrs := []attribute.KeyValue{
		attribute.String(wire.AttrEventType, wire.EventType),
		attribute.Int("progress.details.z", 1),
		attribute.String("progress.details.a", "leaf replaced by map"),
		attribute.String("progress.details.a.b.c", "deep"),
		attribute.String("progress.details.a.b%2Ed", "dot in key"),
		attribute.String("progress.details.a!", "sorts after a's subtree"),
		attribute.Int("progress.details.z", 2),
		attribute.Float64("progress.details.nan", math.NaN()),
		attribute.Float64("progress.details.inf", math.Inf(-1)),
		attribute.Float64("progress.details.tiny", 1e-9),
		attribute.String("progress.details.%zz", "malformed escape kept"),
		attribute.String("progress.details.bad", "\xff\x1b[31m\u2028"),
		attribute.String("custom", "kept under attributes"),
	}
	rec := logtest.RecordFactory{EventName: "x/Y", Attributes: attrs}.NewRecord()
	exp, buf := newJSON(t)
	if err := exp.Export(context.Background(), []sdklog.Record{rec}); err != nil {
		t.Fatal(err)
	}
	objs := parseLines(t, buf.String())
	d, err := wire.Decode(&rec)
	if err != nil {
		t.Fatal(err)
	}
	// encoding/json cannot marshal NaN or Inf: the exporter's documented
	// fallback is their names as strings.
	d.Details["nan"], d.Details["inf"] = "NaN", "-Inf"
	want := jsonNormal(t, d.Details)
	if !reflect.DeepEqual(objs[0]["details"], want) {
		t.Errorf("details\n got %v\nwant %v", objs[0]["details"], want)
	}
	if got := objs[0]["attributes"]; !reflect.DeepEqual(got, map[string]any{"custom": "kept under attributes"}) {
		t.Errorf("attributes = %v", got)
	}
	if bytes.ContainsAny([]byte(buf.String()), "\x1b\xff") {
		t.Errorf("raw control or invalid byte in %q", buf.String())
	}
}

func TestJSONWithoutTime(t *testing.T) {
	exp, buf := newJSON(t, prettyexporter.WithoutTime())
	rec := logtest.RecordFactory{Timestamp: time.Now(), Body: attribute.StringValue("hi"), Severity: log.SeverityInfo}.NewRecord()
	if err := exp.Export(context.Background(), []sdklog.Record{rec}); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), `{"@version":"1","level":"INFO","message":"hi"}`+"\n"; got != want {
		t.Errorf("got %s want %s", got, want)
	}
}

func TestJSONStructuredBody(t *testing.T) {
	exp, buf := newJSON(t)
	rec := logtest.RecordFactory{Body: attribute.MapValue(attribute.String("k", "v"))}.NewRecord()
	if err := exp.Export(context.Background(), []sdklog.Record{rec}); err != nil {
		t.Fatal(err)
	}
	objs := parseLines(t, buf.String())
	if objs[0]["message"] != `{"k":"v"}` {
		t.Errorf("a map body must become its JSON text in message, got %v", objs[0]["message"])
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(objs[0]["message"].(string)), &m); err != nil || m["k"] != "v" {
		t.Errorf("message %q is not the body's JSON", objs[0]["message"])
	}
}

func TestJSONStreamNamedLikeAField(t *testing.T) {
	// A stream that shares its name with a top-level field must not write
	// that key twice: its payload moves under "transition".
	for _, stream := range []string{"message", "level", "attributes", "tracectx.transactionid"} {
		exp, buf := newJSON(t)
		rec := logtest.RecordFactory{EventName: stream, Attributes: []attribute.KeyValue{
			attribute.String(wire.AttrEventType, wire.TransitionEventType),
			attribute.String("progress."+stream+".status", "True"),
			attribute.String("progress."+stream+".reason", "Ready"),
			attribute.String("tracectx.transactionid", "tx-1"),
			attribute.String("x", "y"),
		}}.NewRecord()
		if err := exp.Export(context.Background(), []sdklog.Record{rec}); err != nil {
			t.Fatal(err)
		}
		if err := uniqueKeys(buf.String()); err != nil {
			t.Errorf("stream %q: %v in %s", stream, err, buf.String())
		}
		objs := parseLines(t, buf.String())
		if want := map[string]any{"status": "True", "reason": "Ready"}; !reflect.DeepEqual(objs[0]["transition"], want) {
			t.Errorf("stream %q: transition = %v in %s", stream, objs[0]["transition"], buf.String())
		}
		if objs[0]["stream"] != stream || objs[0]["message"] != stream {
			t.Errorf("stream %q: %s", stream, buf.String())
		}
	}
}

// TestJSONTimestampHasThreeMillisecondDigits: @timestamp is fixed width,
// RFC 3339 in UTC with exactly three fractional digits, as the collector
// writes it, so a fixed-format parser reads every line and the strings sort
// by time. RFC3339Nano would drop trailing zeros, and at .000 the dot too.
func TestJSONTimestampHasThreeMillisecondDigits(t *testing.T) {
	base := time.Date(2026, 11, 29, 14, 3, 5, 0, time.UTC)
	cases := []struct {
		ts   time.Time
		want string
	}{
		{base, "2026-11-29T14:03:05.000Z"},
		{base.Add(120 * time.Millisecond), "2026-11-29T14:03:05.120Z"},
		{base.Add(100 * time.Millisecond), "2026-11-29T14:03:05.100Z"},
		{base.Add(time.Millisecond), "2026-11-29T14:03:05.001Z"},
		{base.Add(999*time.Millisecond + 999999), "2026-11-29T14:03:05.999Z"},
		{base.Add(500), "2026-11-29T14:03:05.000Z"},
		{base.In(time.FixedZone("CET", 3600)).Add(20 * time.Millisecond), "2026-11-29T14:03:05.020Z"},
	}
	for _, c := range cases {
		exp, buf := newJSON(t)
		rec := logtest.RecordFactory{Timestamp: c.ts, Body: attribute.StringValue("hi")}.NewRecord()
		if err := exp.Export(context.Background(), []sdklog.Record{rec}); err != nil {
			t.Fatal(err)
		}
		got := parseLines(t, buf.String())[0]["@timestamp"]
		if got != c.want {
			t.Errorf("%v: @timestamp = %v, want %s", c.ts, got, c.want)
		}
	}
}
