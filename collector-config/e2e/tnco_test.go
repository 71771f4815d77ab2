package e2e

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/propagation"
)

// withTraceCtx returns ctx carrying the request's tracectx values.
func withTraceCtx(t testing.TB, ctx context.Context, m map[string]string) context.Context {
	t.Helper()
	v, err := propagation.NewValues(m)
	if err != nil {
		t.Fatal(err)
	}
	return propagation.ContextWithValues(ctx, v)
}

// jsonOf normalises v as encoding/json would decode it.
func jsonOf(t testing.TB, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func onTopic(msgs []message, topic string) []message {
	var out []message
	for _, m := range msgs {
		if m.Topic == topic {
			out = append(out, m)
		}
	}
	return out
}

// The message TNCO receives is exactly the seed-000 schema with nested
// details, plus the documented envelope; ordinary logs never reach Kafka;
// secrets are masked by the collector even when the library let them pass.
func TestTNCOMessage(t *testing.T) {
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	col := newCollector(t, b.addr(), []string{"tenant-a", "tenant-b"}, nil)
	col.start()
	d := newDriver(t, col.grpc, driverOpt{})

	ctx := withTraceCtx(t, context.Background(), map[string]string{
		"transactionid": "7d9b1c52-tx", "processid": "proc-42", "tenantid": "tenant-a",
	})
	ctx, span := d.tp.Tracer("ansible-driver").Start(ctx, "playbook")
	sc := span.SpanContext()
	ts := time.Date(2026, 11, 29, 10, 0, 0, 123_000_000, time.UTC)
	env := progress.Envelope{
		Component: progress.Component{Name: "ansible-driver", Version: "1.2.3"},
		Resource:  progress.Resource{Type: "Assembly", ID: "asm-1"},
		Scope:     map[string]string{"tenant": "tenant-a"},
	}
	details := map[string]any{
		"taskName": "install nginx",
		"hostName": "web1",
		"taskResult": map[string]any{
			"msg": "ok", "changed": true, "failed": false, "rc": 0,
			"results": []any{map[string]any{"item": "nginx", "rc": 0}, "plain"},
		},
		"hostStats": map[string]any{"web1.example.com": map[string]any{"ok": 3, "failures": 0}},
		"100%done":  true,
		"empty":     map[string]any{},
		"db":        map[string]any{"user": "app", "password": "hunter2"},
		"sshKey":    "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAAB3NzaC1yc2E\n-----END OPENSSH PRIVATE KEY-----\n",
		"apiToken":  "tok-123",
	}
	if err := d.rec.Record(ctx, progress.Event{Type: "ansible/TaskCompletedOnHost", Details: details, Time: ts, Envelope: env}); err != nil {
		t.Fatal(err)
	}
	if err := d.rec.RecordTransition(ctx, progress.Transition{
		Stream:    progress.StreamProvisioning,
		Condition: progress.Condition{Status: "True", Reason: "Provisioned", Message: "the assembly is ready"},
		Previous:  &progress.Condition{Status: "False", Reason: "Provisioning"},
		Time:      ts.Add(time.Second), Envelope: env,
	}); err != nil {
		t.Fatal(err)
	}
	d.ordinary(ctx, "ordinary-log-marker password=hunter2")
	span.End()
	d.flush(t)

	const topic = "progress_events_tenant-a"
	msgs := cons.waitFor(t, 60*time.Second, "2 messages on "+topic, func(m []message) bool { return len(onTopic(m, topic)) >= 2 })
	got := onTopic(msgs, topic)
	if len(got) != 2 {
		t.Fatalf("want 2 messages on %s, got %d:%s", topic, len(got), summary(got))
	}
	traceEnv := map[string]any{
		"tenant":                 "tenant-a",
		"resource":               map[string]any{"type": "Assembly", "id": "asm-1"},
		"component":              map[string]any{"name": "ansible-driver", "version": "1.2.3"},
		"scope":                  map[string]any{"tenant": "tenant-a"},
		"level":                  "INFO",
		"traceId":                sc.TraceID().String(),
		"spanId":                 sc.SpanID().String(),
		"tracectx.transactionid": "7d9b1c52-tx",
		"tracectx.processid":     "proc-42",
		"tracectx.tenantid":      "tenant-a",
	}
	with := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range traceEnv {
			out[k] = v
		}
		for k, v := range m {
			out[k] = v
		}
		return jsonOf(t, out)
	}
	wantEvent := with(map[string]any{
		"eventType":         "ResourceTransitionProgressEvent",
		"progressEventType": "ansible/TaskCompletedOnHost",
		"details": map[string]any{
			"taskName": "install nginx",
			"hostName": "web1",
			"taskResult": map[string]any{
				"msg": "ok", "changed": true, "failed": false, "rc": 0,
				"results": []any{map[string]any{"item": "nginx", "rc": 0}, "plain"},
			},
			"hostStats": map[string]any{"web1.example.com": map[string]any{"ok": 3, "failures": 0}},
			"100%done":  true,
			"empty":     map[string]any{},
			"db":        map[string]any{"user": "app", "password": "****"},
			"sshKey":    "****\n",
			"apiToken":  "****",
		},
		"sequence":   1,
		"@timestamp": "2026-11-29T10:00:00.123Z",
	})
	wantTransition := with(map[string]any{
		"eventType":         "ConditionTransition",
		"progressEventType": "provisioning",
		"details": map[string]any{
			"status": "True", "reason": "Provisioned", "message": "the assembly is ready",
			"previous": map[string]any{"status": "False", "reason": "Provisioning"},
		},
		"sequence":   2,
		"@timestamp": "2026-11-29T10:00:01.123Z",
	})
	for i, want := range []map[string]any{wantEvent, wantTransition} {
		body := got[i].body(t)
		if !reflect.DeepEqual(body, want) {
			gb, _ := json.MarshalIndent(body, "", "  ")
			wb, _ := json.MarshalIndent(want, "", "  ")
			t.Errorf("message %d:\n got %s\nwant %s", i, gb, wb)
		}
		if h := got[i].Headers["tenantId"]; h != "tenant-a" {
			t.Errorf("message %d: header tenantId = %q, want tenant-a (headers %v)", i, h, got[i].Headers)
		}
	}
	for _, m := range msgs {
		for _, leak := range []string{"hunter2", "tok-123", "AAAAB3NzaC1yc2E", "ordinary-log-marker"} {
			if strings.Contains(string(m.Value), leak) {
				t.Errorf("%q reached Kafka topic %s: %s", leak, m.Topic, m.Value)
			}
		}
	}
	// The driver sent standard records: the collector redacted their
	// attributes and built both messages from them.
	if n := col.metric("otelcol_processor_tnco_records", nil); n != 2 {
		t.Errorf("tnco built %v messages, want the event and the transition", n)
	}
	// The ordinary record left in the same export as the events: it was
	// counted by the ordinary pipeline, so its absence above is not luck.
	if n := col.metric("otelcol_exporter_sent_log_records", map[string]string{"exporter": "debug/ordinary"}); n < 1 {
		t.Errorf("the ordinary pipeline saw no record (sent=%v); the test would prove nothing", n)
	}
}

// The collector nests the flattened details of every record (there is no
// flattened fallback any more): wire keys are unescaped ("%2E" back to
// "."), slices of maps stay as sent, and the message has no
// detailsFlattened member.
func TestTNCOMessageNestsFlattenedDetails(t *testing.T) {
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	col := newCollector(t, b.addr(), []string{"tenant-a"}, nil)
	col.start()
	d := newDriver(t, col.grpc, driverOpt{})
	if err := d.rec.Record(context.Background(), progress.Event{
		Type: "ansible/PlaybookResult",
		Details: map[string]any{
			"hostStats": map[string]any{"web1.example.com": map[string]any{"ok": 3}},
			"plays":     []any{map[string]any{"play": map[string]any{"name": "p"}}},
		},
		Envelope: progress.Envelope{Scope: map[string]string{"tenant": "tenant-a"}},
	}); err != nil {
		t.Fatal(err)
	}
	d.flush(t)
	msgs := cons.waitFor(t, 60*time.Second, "the event", func(m []message) bool { return len(m) == 1 })
	body := msgs[0].body(t)
	want := jsonOf(t, map[string]any{
		"hostStats": map[string]any{"web1.example.com": map[string]any{"ok": 3}},
		"plays":     []any{map[string]any{"play": map[string]any{"name": "p"}}},
	})
	if !reflect.DeepEqual(body["details"], want) || body["detailsFlattened"] != nil {
		t.Errorf("details = %v, detailsFlattened = %v; want %v and no detailsFlattened", body["details"], body["detailsFlattened"], want)
	}
	if body["eventType"] != "ResourceTransitionProgressEvent" || body["progressEventType"] != "ansible/PlaybookResult" {
		t.Errorf("seed keys wrong: %v", body)
	}
}

// @timestamp always has exactly three millisecond digits, so that a
// fixed-format parser reads it and sorting the strings sorts by time:
// trailing zeros are kept and sub-millisecond digits are cut, not rounded.
func TestTimestampMilliseconds(t *testing.T) {
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	col := newCollector(t, b.addr(), nil, nil)
	col.start()
	d := newDriver(t, col.grpc, driverOpt{})

	base := time.Date(2026, 11, 29, 10, 0, 5, 0, time.UTC)
	want := map[string]string{
		"zero":       "2026-11-29T10:00:05.000Z",
		"tens":       "2026-11-29T10:00:05.120Z",
		"hundreds":   "2026-11-29T10:00:05.100Z",
		"one":        "2026-11-29T10:00:05.001Z",
		"last":       "2026-11-29T10:00:05.999Z",
		"sub-milli":  "2026-11-29T10:00:05.999Z",
		"other-zone": "2026-11-29T10:00:05.000Z",
	}
	at := map[string]time.Time{
		"zero":       base,
		"tens":       base.Add(120 * time.Millisecond),
		"hundreds":   base.Add(100 * time.Millisecond),
		"one":        base.Add(time.Millisecond),
		"last":       base.Add(999 * time.Millisecond),
		"sub-milli":  base.Add(999*time.Millisecond + 999*time.Microsecond),
		"other-zone": base.In(time.FixedZone("UTC+5", 5*3600)),
	}
	for name, ts := range at {
		if err := d.rec.Record(context.Background(), progress.Event{
			Type: "ansible/PlayStarted", Details: map[string]any{"playName": name}, Time: ts,
		}); err != nil {
			t.Fatal(err)
		}
	}
	d.flush(t)
	msgs := cons.waitFor(t, 60*time.Second, "every event", func(m []message) bool { return len(m) >= len(want) })
	for _, m := range msgs {
		body := m.body(t)
		name := body["details"].(map[string]any)["playName"].(string)
		if got := body["@timestamp"]; got != want[name] {
			t.Errorf("%s: @timestamp = %v, want %s", name, got, want[name])
		}
		delete(want, name)
	}
	if len(want) > 0 {
		t.Errorf("events missing: %v", want)
	}
}
