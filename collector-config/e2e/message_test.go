package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/progress/wire"
)

// The message TNCO receives for a driver on this library is the message
// wire.AppendMessage builds in-process from the records the driver sent
// (standard records: attributes, no message body), byte for byte: the
// collector builds it from the record's attributes with the same builder,
// for events and transitions alike, with the library's own redaction on.
// The one change is the collector's redaction: a secret key's value, which
// the library wrote as [REDACTED], is masked as the collector masks it.
func TestCollectorBuildsTheDriversMessage(t *testing.T) {
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	col := newCollector(t, b.addr(), []string{"tenant-a"}, nil)
	col.start()
	sent := &progresstest.Exporter{}
	d := newDriver(t, col.grpc, driverOpt{libRedacted: true, capture: sent})

	ctx := withTraceCtx(t, context.Background(), map[string]string{"transactionid": "tx-9", "tenantid": "tenant-a"})
	ctx, span := d.tp.Tracer("ansible-driver").Start(ctx, "playbook")
	env := progress.Envelope{
		Component: progress.Component{Name: "ansible-driver", Version: "1.2.3"},
		Resource:  progress.Resource{Type: "Assembly", ID: "asm-<1>&"},
		Scope:     map[string]string{"tenant": "tenant-a", "project": "p.1"},
	}
	events := []progress.Event{
		{Type: "ansible/TaskStarted", Envelope: env, Details: map[string]any{"taskName": "install <nginx>", "args": map[string]any{"password": "hunter2", "dest": "/etc"}}},
		{Type: "ansible/TaskCompletedOnHost", Envelope: env, Details: map[string]any{"taskResult": map[string]any{"rc": 0, "stdout": "a\nb", "ratio": 0.25}, "a.b": []any{1, "x", nil}}},
		{Type: "common/Progress", Envelope: env, Details: progress.Progress(3, 10, "tasks").Details},
	}
	for _, e := range events {
		if err := d.rec.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.rec.RecordTransition(ctx, progress.Transition{Stream: progress.StreamProvisioning, Envelope: env,
		Condition: progress.Condition{Status: "True", Reason: "Provisioned"}, Previous: &progress.Condition{Status: "False", Reason: "Provisioning"}}); err != nil {
		t.Fatal(err)
	}
	span.End()
	d.flush(t)

	const topic = "progress_events_tenant-a"
	msgs := cons.waitFor(t, 60*time.Second, "4 messages", func(m []message) bool { return len(onTopic(m, topic)) >= 4 })
	got := onTopic(msgs, topic)
	recs := sent.Records()
	if len(got) != 4 || len(recs) != 4 {
		t.Fatalf("%d messages, %d records sent; want 4 of each", len(got), len(recs))
	}
	for i := range recs {
		want, ok := wire.AppendMessage(nil, &recs[i])
		if !ok {
			t.Fatalf("record %d is not a progress record", i)
		}
		want = bytes.ReplaceAll(want, []byte(`"password":"[REDACTED]"`), []byte(`"password":"****"`))
		if !bytes.Equal(got[i].Value, want) {
			t.Errorf("message %d:\n got %s\nwant %s (wire.AppendMessage of the record sent)", i, got[i].Value, want)
		}
		if b := recs[i].Body(); b.Type() != attribute.EMPTY && !(i == 3 && b.AsString() == string(progress.StreamProvisioning)) {
			t.Errorf("record %d was sent with a body (%v): the driver's records are standard records", i, b)
		}
	}
	if n := col.metric("otelcol_processor_tnco_records", nil); n != 4 {
		t.Errorf("tnco built %v messages, want 4", n)
	}
}

// The collector never trusts a body a sender sends: a forged message body
// (another tenant, sequence, trace and details, a secret) is ignored and
// overwritten by the message built from the record's attributes; the
// routing follows the progress.tenant attribute alone, and every attribute
// the message is built from (details and envelope) is redacted whatever
// the sender did.
func TestDriverMessageIsCheckedNotTrusted(t *testing.T) {
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	col := newCollector(t, b.addr(), []string{"tenant-a", "tenant-b"}, nil)
	col.start()
	d := newDriver(t, col.grpc, driverOpt{})
	ctx, span := d.tp.Tracer("driver").Start(context.Background(), "forged")
	sc := span.SpanContext()
	forged := `{"details":{"apiToken":"tok-999","injected":"from the body","note":"` + "-----BEGIN RSA PRIVATE KEY-----\\nMIIF\\n-----END RSA PRIVATE KEY-----" + `"},` +
		`"eventType":"ResourceTransitionProgressEvent","level":"INFO","progressEventType":"ansible/TaskStarted",` +
		`"sequence":99,"tenant":"tenant-b","traceId":"ffffffffffffffffffffffffffffffff"}`
	var r log.Record
	r.SetEventName("ansible/TaskStarted")
	r.SetSeverity(log.SeverityInfo)
	r.SetSeverityText("INFO")
	r.SetTimestamp(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
	r.SetBody(attribute.ByteSliceValue([]byte(forged)))
	r.AddAttributes(
		attribute.String(wire.AttrEventType, wire.EventType),
		attribute.String(wire.DetailsPrefix+"apiToken", "tok-123"),
		attribute.String(wire.DetailsPrefix+"note", "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----"),
		attribute.String(wire.DetailsPrefix+"taskName", "install"),
		attribute.String(wire.AttrTenant, "tenant-a"),
		attribute.Int(wire.AttrSequence, 1),
		// A secret in an envelope attribute, not only in the details.
		attribute.String(wire.TraceCtxPrefix+"processid", "-----BEGIN OPENSSH PRIVATE KEY-----\nMIIG\n-----END OPENSSH PRIVATE KEY-----"),
	)
	d.lp.Logger(wire.ScopeName).Emit(ctx, r)
	span.End()
	d.flush(t)

	cons.waitFor(t, 60*time.Second, "the event", func(m []message) bool { return len(m) >= 1 })
	time.Sleep(time.Second) // anything on another topic would have arrived by now
	msgs := cons.all()
	if len(msgs) != 1 || msgs[0].Topic != "progress_events_tenant-a" {
		t.Fatalf("want one message, on tenant-a's topic (the attribute's tenant):%s", summary(msgs))
	}
	var got map[string]any
	if err := json.Unmarshal(msgs[0].Value, &got); err != nil {
		t.Fatal(err)
	}
	want := jsonOf(t, map[string]any{
		"@timestamp": "2026-11-29T10:00:00.000Z", "eventType": "ResourceTransitionProgressEvent",
		"progressEventType": "ansible/TaskStarted", "level": "INFO", "sequence": 1, "tenant": "tenant-a",
		"traceId": sc.TraceID().String(), "spanId": sc.SpanID().String(),
		"details":            map[string]any{"apiToken": "****", "note": "****", "taskName": "install"},
		"tracectx.processid": "****",
	})
	if !jsonEqual(got, want) {
		t.Errorf("message\n got %s\nwant %v", msgs[0].Value, want)
	}
	for _, leak := range []string{"tok-123", "MIIE", "MIIG", "tok-999", "MIIF", "injected", "tenant-b", "ffffffff"} {
		if strings.Contains(string(msgs[0].Value), leak) {
			t.Errorf("%q from the sender's record reached Kafka: %s", leak, msgs[0].Value)
		}
	}
}

// A Go driver's record whose message is over the size limit (here 3000
// bytes, with no string long enough to cut) reaches Kafka with its details
// emptied, marked truncated and counted; the record after it is whole.
func TestOversizeDriverMessageIsCut(t *testing.T) {
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	col := newCollector(t, b.addr(), []string{"tenant-a"}, map[string]string{"PROGRESS_MAX_MESSAGE_BYTES": "3000"})
	col.start()
	d := newDriver(t, col.grpc, driverOpt{libRedacted: true})
	env := progress.Envelope{Scope: map[string]string{"tenant": "tenant-a"}}
	big := strings.Repeat("x", 1500)
	if err := d.rec.Record(context.Background(), progress.Event{Type: "ansible/TaskCompletedOnHost", Envelope: env,
		Details: map[string]any{"stdout": big, "stderr": big, "taskName": "big"}}); err != nil {
		t.Fatal(err)
	}
	if err := d.rec.Record(context.Background(), progress.Event{Type: "ansible/TaskStarted", Envelope: env,
		Details: map[string]any{"taskName": "small"}}); err != nil {
		t.Fatal(err)
	}
	d.flush(t)
	msgs := cons.waitFor(t, 60*time.Second, "2 messages", func(m []message) bool { return len(m) >= 2 })
	first, second := msgs[0].body(t), msgs[1].body(t)
	if first["truncated"] != true || len(first["details"].(map[string]any)) != 0 || len(msgs[0].Value) > 3000 {
		t.Errorf("the oversize message was not cut to the limit: %d bytes, %s", len(msgs[0].Value), msgs[0].Value)
	}
	if second["truncated"] != nil || second["details"].(map[string]any)["taskName"] != "small" {
		t.Errorf("the small message changed: %s", msgs[1].Value)
	}
	oversizeCounted(t, col, "cut", 1)
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
