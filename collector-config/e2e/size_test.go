package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
	"github.com/progressotel/progressotel/tncomessage"
)

// rawEvent emits a progress event the way a driver that is not built on
// this library can (a Python driver on the OTel SDK, say): the wire
// contract's scope and attributes, the details flattened as docs/wire.md
// says (flatDetails), no body, and none of the library's limits. It is how
// an event larger than Kafka's message limit reaches the collector.
func (d *driver) rawEvent(ctx context.Context, typ string, seq int, details attribute.Value, extra ...attribute.KeyValue) {
	var r log.Record
	r.SetEventName(typ)
	r.SetTimestamp(time.Now())
	r.SetSeverity(log.SeverityInfo)
	r.SetSeverityText("INFO")
	r.AddAttributes(attribute.String(wire.AttrEventType, wire.EventType))
	r.AddAttributes(flatDetails(details)...)
	r.AddAttributes(append([]attribute.KeyValue{
		attribute.String(wire.AttrTenant, "tenant-a"),
		attribute.Int(wire.AttrSequence, seq),
	}, extra...)...)
	d.lp.Logger(wire.ScopeName).Emit(ctx, r)
}

// flatDetails flattens details by the wire contract, as a sender in
// another language must (docs/wire.md, "Details"): a non-empty map's
// entries below progress.details., each key escaped, keys in byte order;
// any other value whole, a top-level one under progress.details.value.
// Unlike progresstest.Flatten it applies no redaction and no limits.
func flatDetails(details attribute.Value) []attribute.KeyValue {
	if details.Type() != attribute.MAP {
		if details.Type() == attribute.EMPTY {
			return nil
		}
		return []attribute.KeyValue{{Key: wire.DetailsPrefix + wire.ValueKey, Value: details}}
	}
	var out []attribute.KeyValue
	var walk func(path string, kvs []attribute.KeyValue)
	walk = func(path string, kvs []attribute.KeyValue) {
		kvs = slices.Clone(kvs)
		slices.SortFunc(kvs, func(a, b attribute.KeyValue) int { return strings.Compare(string(a.Key), string(b.Key)) })
		for _, kv := range kvs {
			p := path + tncomessage.EscapeSegment(string(kv.Key))
			if kv.Value.Type() == attribute.MAP && len(kv.Value.AsMap()) > 0 {
				walk(p+wire.DetailsSeparator, kv.Value.AsMap())
				continue
			}
			out = append(out, attribute.KeyValue{Key: attribute.Key(p), Value: kv.Value})
		}
	}
	walk(wire.DetailsPrefix, details.AsMap())
	return out
}

// bySequence indexes the bodies of the messages on topic by sequence.
func bySequence(t *testing.T, msgs []message, topic string) map[int]map[string]any {
	out := map[int]map[string]any{}
	for _, m := range onTopic(msgs, topic) {
		b := m.body(t)
		seq, _ := b["sequence"].(float64)
		if _, dup := out[int(seq)]; dup {
			t.Errorf("sequence %v delivered twice", seq)
		}
		out[int(seq)] = b
	}
	return out
}

// No event is lost to Kafka's message size limit: the collector cuts what
// is too large and marks it truncated, and an event whose envelope alone is
// too large becomes a common/EventsDropped report, shaped as the driver's
// own, in its place on the tenant's topic. Events below the limit pass
// untouched.
func TestOversizeEventsAreCutNotLost(t *testing.T) {
	const topic = "progress_events_tenant-a"
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	col := newCollector(t, b.addr(), []string{"tenant-a"}, nil)
	col.start()
	d := newDriver(t, col.grpc, driverOpt{})
	ctx, span := d.tp.Tracer("driver").Start(context.Background(), "run")
	defer span.End()

	huge := strings.Repeat("x", 1_200_000) // over 900 000, the default limit
	under := strings.Repeat("u", 800_000)
	sv := attribute.StringValue
	str := func(v any) string { s, _ := v.(string); return s }
	events := []struct {
		typ     string
		details attribute.Value
		extra   []attribute.KeyValue
	}{
		1: {"ansible/PlayStarted", attribute.MapValue(attribute.String("playName", "small")), nil},
		2: {"ansible/TaskCompletedOnHost", attribute.MapValue(attribute.String("taskName", "under"), attribute.KeyValue{Key: "stdout", Value: sv(under)}), nil},
		3: {"ansible/TaskCompletedOnHost", attribute.MapValue(attribute.String("taskName", "top"), attribute.KeyValue{Key: "stdout", Value: sv(huge)}), nil},
		4: {"ansible/TaskCompletedOnHost", attribute.MapValue(attribute.String("taskName", "nested"),
			attribute.Map("taskResult", attribute.String("stdout", huge), attribute.Int("rc", 0))), nil},
		5: {"ansible/TaskFailedOnHost", attribute.MapValue(attribute.String("taskName", "envelope")),
			[]attribute.KeyValue{attribute.String("tracectx.processid", huge), attribute.String("tracectx.transactionid", "tx-5")}},
	}
	for seq := 1; seq < len(events); seq++ {
		e := events[seq]
		d.rawEvent(ctx, e.typ, seq, e.details, e.extra...)
		d.flush(t) // one large record per OTLP request (gRPC takes 4 MiB at most)
	}
	msgs := cons.waitFor(t, 90*time.Second, "5 messages", func(m []message) bool { return len(onTopic(m, topic)) >= 5 })
	for _, m := range msgs {
		if len(m.Value) > 900_000 {
			t.Errorf("a message of %d bytes reached Kafka, over the 900000 limit", len(m.Value))
		}
	}
	got := bySequence(t, msgs, topic)
	details := func(seq int) map[string]any { d, _ := got[seq]["details"].(map[string]any); return d }

	if det := details(1); det["playName"] != "small" || got[1]["truncated"] != nil {
		t.Errorf("small event changed: %v", got[1])
	}
	if det := details(2); det["stdout"] != under || got[2]["truncated"] != nil {
		t.Errorf("an event under the limit was cut: %d bytes of stdout, truncated=%v", len(str(det["stdout"])), got[2]["truncated"])
	}
	// Details are flattened, so a string at any depth is a detail string
	// the first step cuts, and the rest of the details stay.
	cutTo := strings.Repeat("x", tncomessage.CutLen) + wire.TruncatedSuffix
	if det := details(3); det["taskName"] != "top" || det["stdout"] != cutTo || got[3]["truncated"] != true {
		t.Errorf("long top-level string: taskName=%v stdout=%d bytes truncated=%v, want top, %d bytes, true",
			det["taskName"], len(str(det["stdout"])), got[3]["truncated"], len(cutTo))
	}
	det4 := details(4)
	res, _ := det4["taskResult"].(map[string]any)
	if det4["taskName"] != "nested" || res["stdout"] != cutTo || res["rc"] != float64(0) || got[4]["truncated"] != true ||
		got[4]["progressEventType"] != "ansible/TaskCompletedOnHost" {
		t.Errorf("nested oversize: taskName=%v taskResult.stdout=%d bytes rc=%v truncated=%v type=%v, want nested, %d bytes, 0, true, ansible/TaskCompletedOnHost",
			det4["taskName"], len(str(res["stdout"])), res["rc"], got[4]["truncated"], got[4]["progressEventType"], len(cutTo))
	}
	oversizeCounted(t, col, "cut", 2)
	oversizeCounted(t, col, "report", 1)

	report := got[5]
	det := details(5)
	if report["progressEventType"] != progress.TypeEventsDropped || report["eventType"] != "ResourceTransitionProgressEvent" ||
		report["level"] != "WARN" || report["tenant"] != "tenant-a" || report["traceId"] != span.SpanContext().TraceID().String() ||
		report["tracectx.transactionid"] != "tx-5" || report["tracectx.processid"] != nil {
		t.Errorf("the report's envelope: %v", report)
	}
	if det["count"] != float64(1) || det["reason"] != "too_large" || det["droppedType"] != "ansible/TaskFailedOnHost" ||
		det["bytes"].(float64) <= 1_200_000 || det["since"] == nil || det["since"] != det["until"] || det["since"] != report["@timestamp"] {
		t.Errorf("the report's details: %v", det)
	}
	// The report is what the outage test's reader of driver drops counts.
	if n, reports := dropped(t, onTopic(msgs, topic)); n != 1 || reports != 1 {
		t.Errorf("drop reports count %v in %d reports, want 1 in 1", n, reports)
	}
}

// When the guard is set above what the Kafka producer accepts (here 2 MB
// against the producer's 1 000 000 bytes), the oversize record is refused
// by the Kafka client and lost; the rest of its request is delivered. This
// is the case the guard prevents, and it shows which of the collector's
// own metrics tells the truth (docs/collector.md, "Message size"):
// otelcol_exporter_send_failed_log_records counts the whole request,
// otelcol_kafka_exporter_records{outcome="failure"} the one record.
func TestOversizeRecordWithoutGuardMetrics(t *testing.T) {
	const topic = "progress_events_tenant-a"
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	col := newCollector(t, b.addr(), []string{"tenant-a"}, map[string]string{"PROGRESS_MAX_MESSAGE_BYTES": "2000000"})
	col.start()
	// One request: the 50 ms export timer of a slow machine would split it.
	d := newDriver(t, col.grpc, driverOpt{flushOnly: true})

	for seq := 1; seq <= 4; seq++ {
		v := "small"
		if seq == 2 {
			v = strings.Repeat("x", 1_200_000)
		}
		d.rawEvent(context.Background(), "ansible/TaskCompletedOnHost", seq, attribute.MapValue(attribute.String("stdout", v)))
	}
	d.flush(t) // one OTLP request, one batch, one Kafka request
	cons.waitFor(t, 60*time.Second, "the 3 small events", func(m []message) bool { return len(onTopic(m, topic)) >= 3 })

	labels := map[string]string{"exporter": "kafka/tenant_tenant-a"}
	deadline := time.Now().Add(30 * time.Second)
	var failedRequest, failedRecords, written float64
	for time.Now().Before(deadline) {
		failedRequest = col.metric("otelcol_exporter_send_failed_log_records", labels)
		failedRecords = col.metric("otelcol_kafka_exporter_records", map[string]string{"outcome": "failure"})
		written = col.metric("otelcol_kafka_exporter_records", map[string]string{"outcome": "success"})
		if failedRequest > 0 && failedRecords > 0 && written >= 3 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if failedRequest != 4 || failedRecords != 1 || written != 3 {
		t.Errorf("send_failed_log_records=%v (want 4: the whole request), kafka_exporter_records failure=%v (want 1), success=%v (want 3)\n%s",
			failedRequest, failedRecords, written, grepLines(col.metricsText(t), "otelcol_exporter_send", "otelcol_kafka_exporter_records"))
	}
	time.Sleep(time.Second)
	if n := len(onTopic(cons.all(), topic)); n != 3 {
		t.Errorf("%d messages on %s, want the 3 small ones", n, topic)
	}
}
