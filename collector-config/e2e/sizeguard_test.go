package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/progress/wire"
)

// secretLines is details of n secret-named keys, each a value of lines
// empty lines: redaction masks a secret line by line, each line becoming
// "****", so a value of lines newlines (2 bytes each in JSON) grows to
// about three times its size.
func secretLines(n, lines int) attribute.Value {
	kvs := make([]attribute.KeyValue, n)
	for i := range kvs {
		kvs[i] = attribute.String(fmt.Sprintf("token%03d", i), strings.Repeat("\n", lines))
	}
	return attribute.MapValue(kvs...)
}

// oversizeCounted waits for the tnco processor to have counted want
// records of the outcome, and fails when it counts another number.
func oversizeCounted(t *testing.T, col *collector, outcome string, want float64) {
	t.Helper()
	labels := map[string]string{"outcome": outcome}
	deadline := time.Now().Add(20 * time.Second)
	got := col.metric("otelcol_processor_tnco_oversize_records", labels)
	for got < want && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		got = col.metric("otelcol_processor_tnco_oversize_records", labels)
	}
	if got != want {
		t.Errorf("otelcol_processor_tnco_oversize_records{outcome=%q} = %v, want %v\n%s", outcome, got, want,
			grepLines(col.metricsText(t), "otelcol_processor_tnco_oversize_records"))
	}
}

// The size guard measures the message after redaction, its last change:
// a record from a driver not built on the library whose details are 400
// secret-named keys of 700 empty lines each gives a message of about
// 570 kB, under the 900 kB guard, and redaction makes it 1.7 MB (each
// value 3504 bytes, too short to cut). It reaches the tenant's topic with
// its details emptied and marked truncated, counted, instead of being
// refused by Kafka (MESSAGE_TOO_LARGE) and lost without a word in the
// stream.
func TestSizeGuardMeasuresAfterRedaction(t *testing.T) {
	const topic = "progress_events_tenant-a"
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	col := newCollector(t, b.addr(), []string{"tenant-a"}, nil)
	col.start()
	sent := &progresstest.Exporter{}
	d := newDriver(t, col.grpc, driverOpt{noAttrLimit: true, capture: sent})
	ctx := context.Background()
	d.rawEvent(ctx, "ansible/TaskCompletedOnHost", 1, attribute.MapValue(attribute.String("taskName", "before")))
	d.rawEvent(ctx, "ansible/TaskCompletedOnHost", 2, secretLines(400, 700))
	d.flush(t)
	if recs := sent.Records(); len(recs) != 2 {
		t.Fatalf("%d records sent, want 2", len(recs))
	} else if msg, _ := wire.AppendMessage(nil, &recs[1]); len(msg) >= 900_000 || len(msg) < 500_000 {
		t.Fatalf("the message before redaction is %d bytes, want it under the 900000 guard and large", len(msg))
	}
	d.rawEvent(ctx, "ansible/TaskCompletedOnHost", 3, attribute.MapValue(attribute.String("taskName", "after")))
	d.flush(t)

	msgs := cons.waitFor(t, 60*time.Second, "3 messages", func(m []message) bool { return len(onTopic(m, topic)) >= 3 })
	for _, m := range msgs {
		if len(m.Value) > 900_000 {
			t.Errorf("a message of %d bytes reached Kafka, over the 900000 limit", len(m.Value))
		}
	}
	got := bySequence(t, msgs, topic)
	if det, _ := got[2]["details"].(map[string]any); got[2]["truncated"] != true || got[2]["progressEventType"] != "ansible/TaskCompletedOnHost" ||
		det == nil || len(det) != 0 {
		t.Errorf("the record redaction made too large: truncated=%v type=%v details of %d keys, want it emptied ({}) and marked",
			got[2]["truncated"], got[2]["progressEventType"], len(det))
	}
	if det, _ := got[3]["details"].(map[string]any); det["taskName"] != "after" {
		t.Errorf("the record after it: %v", got[3])
	}
	oversizeCounted(t, col, "cut", 1)
	if n := col.metric("otelcol_kafka_exporter_records", map[string]string{"outcome": "failure"}); n != 0 {
		t.Errorf("Kafka refused %v records", n)
	}
}

// With a small limit (2000 bytes), every message that reaches Kafka is
// within it, whatever redaction did: records over it are cut and marked
// truncated, or replaced by a common/EventsDropped report, and counted;
// none is lost. Sizes step across the limit, with text that JSON escapes
// (<, >, &, quotes, control characters) and secret-named keys that
// redaction enlarges.
func TestSizeGuardSmallLimit(t *testing.T) {
	const limit = 2000
	const topic = "progress_events_tenant-a"
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	col := newCollector(t, b.addr(), []string{"tenant-a"}, map[string]string{"PROGRESS_MAX_MESSAGE_BYTES": strconv.Itoa(limit)})
	col.start()
	d := newDriver(t, col.grpc, driverOpt{})
	env := progress.Envelope{Scope: map[string]string{"tenant": "tenant-a"}}
	n := 0
	for size := 1500; size <= 2600; size += 50 {
		for _, fill := range []string{"x", "<&>", "\"\\\t"} {
			text := strings.Repeat(fill, size/len(fill)/2)
			details := map[string]any{"n": n, "text": text[:min(len(text), 4000)]}
			for i := range (size - len(text)) / 20 {
				details[fmt.Sprintf("token%05d", i)] = ""
			}
			if err := d.rec.Record(context.Background(), progress.Event{Type: "demo/Sized", Envelope: env, Details: details}); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	d.flush(t)
	msgs := cons.waitFor(t, 60*time.Second, strconv.Itoa(n)+" messages", func(m []message) bool { return len(onTopic(m, topic)) >= n })
	cut := 0
	seqs := map[float64]bool{}
	for _, m := range onTopic(msgs, topic) {
		if len(m.Value) > limit {
			t.Errorf("a message of %d bytes reached Kafka, over the %d limit: %.200s", len(m.Value), limit, m.Value)
		}
		body := m.body(t)
		seq, _ := body["sequence"].(float64)
		seqs[seq] = true
		if body["truncated"] == true || body["progressEventType"] == progress.TypeEventsDropped {
			cut++
		}
	}
	if len(seqs) != n {
		t.Errorf("%d distinct sequences among the messages, want %d: a record was lost or delivered twice", len(seqs), n)
	}
	if cut == 0 || cut == n {
		t.Fatalf("%d of %d records cut: the sizes do not straddle the limit", cut, n)
	}
	total := col.metric("otelcol_processor_tnco_oversize_records", nil)
	if total != float64(cut) {
		t.Errorf("otelcol_processor_tnco_oversize_records = %v, want the %d records cut or reported", total, cut)
	}
}
