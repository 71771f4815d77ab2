package prettyexporter

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/tncomessage"
)

// The common events the live view reads, with the detail keys it reads: package progress's wire
// names, which this package does not import (a test checks each against its constant). No adapter's
// event is named here: the tree comes from spans (live_spans.go).
const (
	typeOperationStarted   = "common/OperationStarted"   // operation
	typeProgress           = "common/Progress"           // completed, total, unit
	typeOperationCompleted = "common/OperationCompleted" // operation, durationMs
	typeOperationFailed    = "common/OperationFailed"    // operation, failureCode, description
	typeEventsDropped      = "common/EventsDropped"      // count, reason
)

// apply updates the model with one record that arrived at wall time wall. Its cost does not grow
// with the model: a few map lookups and a pass over the record's attributes.
func (m *liveModel) apply(r *sdklog.Record, wall time.Time) {
	v := tncomessage.GetView()
	defer tncomessage.PutView(v)
	v.Load(r)
	ts := recordTime(r)
	if ts.IsZero() {
		ts = wall
	}
	if m.flat || v.Kind == tncomessage.KindLog || v.Name == typeEventsDropped {
		m.moveOn(liveKey{}, wall)
		m.noteRecord(r) // not part of an operation's tree
		return
	}
	key := keyOf(r, v)
	m.moveOn(key, wall)
	if _, ok := m.endedSet[key]; ok {
		m.noteRecord(r) // a late record of an operation already printed
		return
	}
	t := m.tree(key, wall)
	m.touch(t, ts, wall)
	if t.start.IsZero() {
		t.start = ts
	}
	if t.resource == "" && (v.ResourceType != "" || v.ResourceID != "") {
		sep := ""
		if v.ResourceType != "" && v.ResourceID != "" {
			sep = "/"
		}
		t.resource = safeText(v.ResourceType+sep+v.ResourceID, maxLabelBytes)
	}
	if t.title == "" {
		group, _, _ := strings.Cut(v.Name, "/")
		t.title = safeText(group, maxLabelBytes)
	}
	if t.tx == "" && v.HasTx && v.TxID != "" {
		t.tx = safeText(v.TxID, maxLabelBytes)
	}
	ended := false
	if v.Kind == tncomessage.KindTransition {
		m.transition(t, v, ts)
	} else {
		ended = m.event(t, r, v, ts)
	}
	if m.lines {
		m.noteLine(t, r, wall)
	}
	if ended {
		// The operation ended; its tree waits headGrace for what is recorded right after, as a
		// condition transition is (docs/transitions.md: emit once the write is persisted), so
		// that such a record updates its row rather than printing beside the finished tree.
		t.end = ts
		m.settleStreams(t)
		if c := wall.Add(headGrace); t.closing.IsZero() || c.Before(t.closing) {
			t.closing = c
		}
	}
}

// keyOf is the operation a record belongs to: its trace, else its resource, else its transaction.
func keyOf(r *sdklog.Record, v *tncomessage.View) liveKey {
	if tid := r.TraceID(); tid.IsValid() {
		return liveKey{trace: tid}
	}
	if v.HasResource() {
		return liveKey{other: "r\x00" + v.ResourceType + "\x00" + v.ResourceNamespace + "\x00" + v.ResourceID}
	}
	if v.HasTx {
		return liveKey{other: "x\x00" + v.TxID}
	}
	return liveKey{other: "-"}
}

// event applies a progress event; it reports whether the operation ended. The record's span, when
// the view has its row, says where it belongs.
func (m *liveModel) event(t *liveTree, r *sdklog.Record, v *tncomessage.View, ts time.Time) (ended bool) {
	var node *liveNode // the record's span's row, nil for the head or none
	head := true
	if sid := r.SpanID(); sid.IsValid() {
		if n := m.spans[spanKey{r.TraceID(), sid}]; n != nil && n.tree == t {
			if n != &t.root {
				node, head = n, false
			}
		} else if t.root.span.IsValid() && t.root.span != sid {
			head = false // a span the view has no row for (past the cap, ended)
		}
	}
	switch v.Name {
	case typeOperationStarted:
		if node != nil {
			node.op = true // its parts are the operation's: see maxCollapsedLeaves
		}
		if op := detail(v, "operation").String(); op != "" && (head || t.op == "") {
			t.op = safeText(op, maxLabelBytes)
			if head {
				t.start = ts
			}
		}
		return false
	case typeOperationCompleted, typeOperationFailed:
		failed := v.Name == typeOperationFailed
		text := ""
		if failed {
			code, desc, sep := detail(v, "failureCode").String(), detail(v, "description").String(), ""
			if code != "" && desc != "" {
				sep = ": "
			}
			text = safeText(code+sep+desc, maxMsgBytes)
		}
		if !head {
			// A nested operation (a run inside the run): its span's end says how it ended; the row
			// keeps the text.
			if node != nil && failed {
				node.msg, node.told = text, true
			}
			return false
		}
		t.status, t.end = stOK, ts
		if failed {
			t.status, t.msg = stFailed, text
		}
		return true
	case typeProgress:
		unit := detail(v, "unit").String()
		t.bar.done, t.bar.total, t.bar.ok = detailInt(v, "completed"), detailInt(v, "total"), true
		if t.bar.unit == "" || unit != "" && !strings.EqualFold(unit, t.bar.unit) {
			t.bar.unit = safeText(unit, 40)
		}
		return false
	}
	warn := r.Severity() >= log.SeverityWarn
	switch {
	case node != nil:
		// An event in a span's row: a warning or an error gives the row its text; the rest the row
		// already shows.
		if warn {
			if text := eventText(v); text != "" {
				node.msg, node.told = safeText(text, maxMsgBytes), true
			}
		}
	case head && t.spanRows == 0:
		// A driver without spans of its own under the operation: its last event is a row.
		m.lastEvent(t, r, v, ts)
	case warn:
		m.noteRecord(r)
	}
	return false
}

// textKeys are the detail keys, in order of preference, whose value is an event's text for a
// person: the last segment of the detail's path (taskResult.msg is "msg"). They are words, not any
// tool's names.
var textKeys = [...]string{"description", "message", "msg", "summary", "error", "reason", "output"}

// eventText is the text of an event: its first detail named by textKeys, with a "detail" detail
// after a summary.
func eventText(v *tncomessage.View) string {
	best, text, extra := len(textKeys), "", ""
	for i := range v.Details {
		d := &v.Details[i]
		if d.Value.Type() != attribute.STRING || d.Value.AsString() == "" {
			continue
		}
		key := d.Path[strings.LastIndexByte(d.Path, '.')+1:]
		if key == "detail" {
			extra = d.Value.AsString()
			continue
		}
		if k := slices.Index(textKeys[:best], key); k >= 0 {
			best, text = k, d.Value.AsString()
		}
	}
	switch {
	case text == "":
		return extra
	case extra != "" && textKeys[best] == "summary":
		return text + ": " + extra
	}
	return text
}

// lastEvent shows the latest event of a driver the view has no mapping for as one row of its tree;
// warnings and errors are also printed above.
func (m *liveModel) lastEvent(t *liveTree, r *sdklog.Record, v *tncomessage.View, ts time.Time) {
	if t.last == nil {
		if t.last = m.newNode(t, &t.root, kindEvent, "", ts); t.last == nil {
			return
		}
	}
	n := t.last
	n.label = safeText(v.Name, maxLabelBytes)
	n.start = ts
	switch sev := r.Severity(); {
	case sev >= log.SeverityError:
		n.status = stFailed
	case sev >= log.SeverityWarn:
		n.status = stIgnored
	default:
		n.status = stRunning
	}
	var b []byte
	for i, d := range v.Details {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(appendText(b, d.Path, false), '=')
		if b = appendPrettyValue(b, d.Value, false); len(b) > maxMsgBytes {
			break
		}
	}
	n.msg = safeText(string(b), maxMsgBytes)
	if r.Severity() >= log.SeverityWarn {
		m.noteRecord(r)
	}
}

// transition shows a condition stream with its current condition: one row per resource and
// stream, which each transition updates (its history folded into a count), under the tree's head.
func (m *liveModel) transition(t *liveTree, v *tncomessage.View, ts time.Time) {
	// The map key is the resource and the name, clipped, so that a huge name costs no more than a
	// short one; the key stored is a copy.
	res := v.ResourceType + "/" + v.ResourceNamespace + "/" + v.ResourceID
	key := res[:min(len(res), maxLabelBytes)] + "\x00" + v.Name[:min(len(v.Name), maxLabelBytes)]
	n := t.streams[key]
	if n == nil {
		label := v.Name
		if own := safeText(v.ResourceType+"/"+v.ResourceID, maxLabelBytes); v.HasResource() && t.resource != "" && own != t.resource {
			label = v.ResourceType + "/" + v.ResourceID + " " + v.Name // a resource of its own in the tree
		}
		if n = m.newNode(t, &t.root, kindStream, safeText(label, maxLabelBytes), ts); n == nil {
			return
		}
		if t.streams == nil {
			t.streams = map[string]*liveNode{}
		}
		t.streams[key] = n
	}
	n.start = ts
	n.changes++
	t.changes++
	n.msg = safeText(string(new(Exporter).appendTransition(nil, v)), maxMsgBytes) // no colour
	n.status = conditionStatus(v.Transition.Status, v.Transition.Reason, t.status.finished())
}

// conditionStatus is the status of a condition's row: done when True, failed when its reason says
// so, else running towards True while its operation runs, and pending (not true, nothing running)
// once it has ended, so that no row reads running under a finished header.
func conditionStatus(status, reason string, ended bool) liveStatus {
	reason = strings.ToLower(reason)
	switch {
	case strings.EqualFold(status, "True"):
		return stOK
	case strings.Contains(reason, "error") || strings.Contains(reason, "fail"):
		return stFailed
	case strings.EqualFold(status, "False") && !ended:
		return stRunning
	}
	return stPending
}

// detail is the value of a detail, empty when absent (its String is then "", as a null's is).
func detail(v *tncomessage.View, path string) attribute.Value {
	for i := range v.Details {
		if v.Details[i].Path == path {
			return v.Details[i].Value
		}
	}
	return attribute.Value{}
}

func detailInt(v *tncomessage.View, path string) int64 {
	switch val := detail(v, path); val.Type() {
	case attribute.INT64:
		return val.AsInt64()
	case attribute.FLOAT64:
		return int64(val.AsFloat64())
	case attribute.STRING:
		n, _ := strconv.ParseInt(val.AsString(), 10, 64)
		return n
	}
	return 0
}
