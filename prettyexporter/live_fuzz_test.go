package prettyexporter

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/internal/base/wireformat"
	"github.com/progressotel/progressotel/tncomessage"
)

// fuzzTypes are the event types a fuzzed record may have: every one the
// live view reads, an adapter's and a driver's it does not, and two
// pseudo-types that start and end a span.
var fuzzTypes = []string{
	typeOperationStarted, typeProgress, typeOperationCompleted, typeOperationFailed, typeEventsDropped,
	"ansible/TaskFailedOnHost", "terraform/Diagnostic", "mydriver/Step", "provisioning", "log",
	"span+", "span+", "span+", "span-", "span-",
}

var fuzzOutcomes = []string{"", outcome.OK, outcome.Changed, outcome.Skipped, outcome.Failed, outcome.Ignored,
	outcome.Rescued, outcome.Cancelled, outcome.TimedOut, outcome.Unreachable, "bogus"}

// fuzzRecords turns bytes into a sequence of records: each starts with a
// type byte, a trace byte and a length, then that many bytes of text used
// for every name of the record (task, host, address, message, ...).
func fuzzRecords(data []byte) []step {
	var recs []step
	ms := 0
	for len(data) >= 3 {
		typ := fuzzTypes[int(data[0])%len(fuzzTypes)]
		tr, n := data[1], int(data[2])%48
		data = data[3:]
		n = min(n, len(data))
		text := string(data[:n])
		data = data[n:]
		ms += 37 * (1 + int(tr)%7)

		at := t0.Add(time.Duration(ms) * time.Millisecond)
		// A few spans per trace, each a child of another (or none).
		sid := func(b byte) trace.SpanID { return trace.SpanID{1 + b%6} }
		sc := func(b byte) trace.SpanContext {
			return trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1 + tr%3}, SpanID: sid(b), TraceFlags: trace.FlagsSampled})
		}
		var b0 byte
		if n > 0 {
			b0 = text[0]
		}
		switch typ {
		case "span+":
			var parent trace.SpanContext
			if tr%4 != 0 {
				parent = sc(b0 + 1 + tr%2)
			}
			recs = append(recs, step{start: true, sc: sc(b0), parent: parent, name: text, at: at})
			continue
		case "span-":
			recs = append(recs, step{end: true, sc: sc(b0), at: at, code: codes.Code(tr % 3), desc: text,
				out: fuzzOutcomes[int(tr)%len(fuzzOutcomes)]})
			continue
		}
		var r sdklog.Record
		r.SetTimestamp(at)
		if tr%5 != 0 {
			r.SetTraceID(trace.TraceID{tr % 5})
			r.SetSpanID(sid(b0))
		}
		r.SetSeverity(log.Severity(1 + int(tr)%24))
		name := func(suffix string) string { // a few names repeat, so that parts are found again
			if len(text) > 0 && text[0]%2 == 0 {
				return text
			}
			return string(rune('a'+int(tr)%3)) + suffix
		}
		kv := []attribute.KeyValue{attribute.String(tncomessage.AttrResourceType, name("type")), attribute.String(tncomessage.TxKey, text)}
		switch typ {
		case "log":
			r.SetBody(attribute.StringValue(text))
		case "provisioning":
			r.SetEventName(typ)
			k := wireformat.TransitionKeysFor(typ)
			kv = append(kv, attribute.String(tncomessage.AttrEventType, tncomessage.TransitionEventType),
				attribute.String(string(k.Status), name("s")), attribute.String(string(k.Reason), text),
				attribute.String(string(k.Message), text), attribute.String(string(k.PrevStatus), "False"))
		default:
			r.SetEventName(typ)
			d := func(k string, v attribute.Value) {
				kv = append(kv, attribute.KeyValue{Key: attribute.Key(tncomessage.DetailsPrefix + k), Value: v})
			}
			kv = append(kv, attribute.String(tncomessage.AttrEventType, tncomessage.EventType))
			for _, k := range []string{"operation", "playName", "taskName", "hostName", "itemLabel", "address", "action", "provisioner",
				"output", "summary", "detail", "varName", "taskResult.msg", "failureCode", "description", "unit", "step"} {
				if k == "itemLabel" && tr%3 != 0 {
					continue
				}
				d(k, attribute.StringValue(name(k[:1])))
			}
			d("taskResult.changed", attribute.BoolValue(tr%2 == 0))
			d("ignored", attribute.BoolValue(tr%4 == 0))
			d("completed", attribute.Int64Value(int64(ms%100)))
			d("total", attribute.Int64Value(int64(tr)-100))
			d("hostStats."+tncomessage.EscapeSegment(text)+".ok", attribute.Int64Value(int64(n)))
		}
		r.SetAttributes(kv...)
		recs = append(recs, step{rec: &r})
	}
	return recs
}

// FuzzLiveFrame: whatever the events and the terminal size, no frame has
// more rows than the height allows or a row as wide as the terminal, no
// control character from the data reaches the terminal, and the model
// stays within its bounds.
func FuzzLiveFrame(f *testing.F) {
	f.Add([]byte("\x00\x01\x07Install\x05\x01\x03web\x07\x01\x04task\x08\x01\x05web-1\x09\x01\x05web-1\x02\x01\x00"), uint8(80), uint8(24))
	f.Add([]byte("\x00\x02\x0c部署 🚀 组件\x10\x02\x08addr\xe2\x80\x8f\x11\x02\x06\x1b[31mx\x13\x02\x04\u202eab\x1a\x02\x03\x9b2J"), uint8(20), uint8(5))
	f.Add(bytes.Repeat([]byte("\x08\x03\x09host-\xff\xfe\x07\x09\x03\x0a"), 40), uint8(12), uint8(3))
	f.Add(bytes.Repeat([]byte("\x1c\x04\x05\t\n\r\x00z\x1d\x04\x02ab\x00\x01\x01X"), 30), uint8(200), uint8(60))
	f.Fuzz(func(t *testing.T, data []byte, w, h uint8) {
		width, height := int(w), int(h)%64
		m := testModel(false)
		m.maxNodes, m.maxTrees = 40, 3
		m.r.width = width
		recs := fuzzRecords(data)
		var fr liveFrame
		for i := range recs {
			applyStep(m.liveModel, &recs[i], recs[i].when())
			if i%3 == 0 || i == len(recs)-1 {
				m.closeDue(recs[i].when().Add(time.Second))
				m.frame(&fr, recs[i].when().Add(time.Second), width, height, i%2 == 0)
				checkFrame(t, &fr, width, height)
				m.r.p.color = i%2 == 0
			}
			if m.nodes > m.maxNodes || len(m.list) > m.maxTrees {
				t.Fatalf("%d nodes (max %d), %d trees (max %d)", m.nodes, m.maxNodes, len(m.list), m.maxTrees)
			}
			total := 0
			for _, tr := range m.list {
				total += countNodes(&tr.root) - 1
			}
			if total != m.nodes {
				t.Fatalf("the model counts %d nodes, its trees hold %d", m.nodes, total)
			}
			for id, n := range m.spans {
				if n.span != id.span || n.tree == nil || n.tree.key.trace != id.trace || m.trees[n.tree.key] != n.tree {
					t.Fatalf("span %v points to a row that is not in the model", id)
				}
			}
		}
		m.endAll(t0)
		if len(m.spans) != 0 || m.nodes != 0 {
			t.Fatalf("after the end: %d spans, %d nodes kept", len(m.spans), m.nodes)
		}
		q := m.take()
		for _, line := range strings.Split(string(q), "\n") {
			if bad := controlOutsideSGR([]byte(line)); bad >= 0 {
				t.Fatalf("line printed above %q: control %#x", line, bad)
			}
		}
	})
}
