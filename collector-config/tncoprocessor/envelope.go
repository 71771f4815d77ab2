package tncoprocessor

import (
	"encoding/hex"
	"slices"
	"strings"
	"time"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// Names of the wire contract (docs/wire.md) and of the TNCO message
// (docs/collector.md, "The TNCO message"), as the stock statements of
// tnco.transform use them. This module does not import the library, so
// they are copies: TestGoldenCorpus fails when one drifts from the
// library's (internal/base/wireformat).
const (
	scopeName           = "github.com/progressotel/progressotel/progress"
	eventType           = "ResourceTransitionProgressEvent"
	transitionEventType = "ConditionTransition"

	attrEventType  = "progress.event_type"
	attrTenant     = "progress.tenant"
	attrGeneration = "progress.observed_generation"
	attrSequence   = "progress.sequence"
	attrTruncated  = "progress.truncated"
	componentRoot  = "progress.component."
	resourceRoot   = "progress.resource."
	scopeRoot      = "progress.scope."
	traceCtxRoot   = "tracectx."

	timeLayout = "2006-01-02T15:04:05.000Z"
)

// entry is an attribute below one of the envelope's prefixes.
type entry struct {
	key string
	val pcommon.Value
}

// envelope is what the stock statements take from a record's attributes,
// gathered in one pass.
type envelope struct {
	eventType, tenant, generation, sequence, truncated pcommon.Value
	has                                                uint8 // bits: which of the values above the record has
	component, resource, scope, tracectx               []entry
	// A transition's payload, by field (status, reason, message and
	// the previous ones).
	cond [6]pcommon.Value
	hasC uint8
}

const (
	hasEventType = 1 << iota
	hasTenant
	hasGeneration
	hasSequence
	hasTruncated
)

var condFields = [6]string{"status", "reason", "message", "previous.status", "previous.reason", "previous.message"}

func (e *envelope) reset() {
	clear(e.component)
	clear(e.resource)
	clear(e.scope)
	clear(e.tracectx)
	*e = envelope{component: e.component[:0], resource: e.resource[:0], scope: e.scope[:0],
		tracectx: e.tracectx[:0]}
}

// gather reads the attributes of lr. It reports false for a record the
// fast path leaves to the stock statements: one with a repeated attribute
// key among those the message is built from (the statements read the
// first of them in some places and the last in others). Repeated detail
// keys do not matter here: the details come from the message.
func (e *envelope) gather(lr plog.LogRecord) bool {
	attrs := lr.Attributes()
	name := lr.EventName()
	single := func(bit uint8, dst *pcommon.Value, v pcommon.Value) bool {
		if e.has&bit != 0 {
			return false
		}
		*dst, e.has = v, e.has|bit
		return true
	}
	ok := true
	for k, v := range attrs.All() {
		switch {
		case k == attrEventType:
			ok = single(hasEventType, &e.eventType, v)
		case k == attrTenant:
			ok = single(hasTenant, &e.tenant, v)
		case k == attrGeneration:
			ok = single(hasGeneration, &e.generation, v)
		case k == attrSequence:
			ok = single(hasSequence, &e.sequence, v)
		case k == attrTruncated:
			ok = single(hasTruncated, &e.truncated, v)
		case strings.HasPrefix(k, traceCtxRoot):
			e.tracectx = append(e.tracectx, entry{k, v})
		case strings.HasPrefix(k, componentRoot):
			e.component = append(e.component, entry{k[len(componentRoot):], v})
		case strings.HasPrefix(k, resourceRoot):
			e.resource = append(e.resource, entry{k[len(resourceRoot):], v})
		case strings.HasPrefix(k, scopeRoot):
			e.scope = append(e.scope, entry{k[len(scopeRoot):], v})
		}
		if !ok {
			return false
		}
		// A transition's payload: progress.<event name>.<field>. The
		// prefixes above cannot shadow it (a stream is a name such as
		// "provisioning"); where one could, the stock statements decide.
		if len(k) > len("progress.")+len(name)+1 && strings.HasPrefix(k, "progress.") &&
			k[len("progress."):len("progress.")+len(name)] == name && k[len("progress.")+len(name)] == '.' {
			field := k[len("progress.")+len(name)+1:]
			for i, f := range condFields {
				if field == f {
					if e.hasC&(1<<i) != 0 {
						return false
					}
					e.cond[i], e.hasC = v, e.hasC|1<<i
				}
			}
		}
	}
	return unique(e.tracectx) && unique(e.component) && unique(e.resource) && unique(e.scope)
}

// unique reports whether no key repeats in es. It sorts es by key: the
// message writes every list in key order anyway.
func unique(es []entry) bool {
	slices.SortFunc(es, func(x, y entry) int { return strings.Compare(x.key, y.key) })
	for i := 1; i < len(es); i++ {
		if es[i].key == es[i-1].key {
			return false
		}
	}
	return true
}

// members builds the message's top-level members other than an event's
// details, which the driver sends (a member with a nil value stands for
// them), in key order, with the log-body redaction rules applied. It
// reports false for a record the fast path leaves to the stock statements.
func (w *work) members(r *check, lr plog.LogRecord, e *envelope) (event bool, ok bool) {
	if e.has&hasEventType == 0 || e.eventType.Type() != pcommon.ValueTypeStr {
		return false, false
	}
	switch e.eventType.Str() {
	case eventType:
		event = true
	case transitionEventType:
	default:
		return false, false
	}
	add := func(key string, v pcommon.Value) bool {
		start := len(w.vals)
		var err error
		if w.vals, err = r.appendValue(w.vals, key, v); err != nil {
			return false
		}
		w.ms = append(w.ms, member{key, w.vals[start:len(w.vals):len(w.vals)]})
		return true
	}
	addText := func(key, text string) {
		start := len(w.vals)
		w.vals = appendString(w.vals, r.redact(key, text))
		w.ms = append(w.ms, member{key, w.vals[start:len(w.vals):len(w.vals)]})
	}
	addMap := func(key string, es []entry) bool {
		if len(es) == 0 {
			return true
		}
		start := len(w.vals)
		if r.keyBlocked(key) {
			w.vals = appendString(w.vals, mask(""))
		} else {
			var err error
			if w.vals, err = r.appendEntries(w.vals, es); err != nil {
				return false
			}
		}
		w.ms = append(w.ms, member{key, w.vals[start:len(w.vals):len(w.vals)]})
		return true
	}

	var tb [40]byte
	view := func(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
	if ns := int64(lr.Timestamp()); ns > 0 {
		addText("@timestamp", view(time.Unix(0, ns).UTC().AppendFormat(tb[:0], timeLayout)))
	}
	if !addMap("component", e.component) {
		return false, false
	}
	if event {
		w.ms = append(w.ms, member{key: "details"})
	} else {
		// {status, reason, message?, previous?: {status, reason, message?}}:
		// condFields[i+3] is the previous condFields[i].
		const both = 1<<0 | 1<<1      // status and reason
		hasPrev := e.hasC&(1<<3) != 0 // previous.status
		if e.hasC&both != both || hasPrev && e.hasC&(both<<3) != both<<3 {
			return false, false
		}
		var cond []entry
		prev := pcommon.NewValueMap()
		for i, f := range condFields[:3] {
			if e.hasC&(1<<i) != 0 {
				cond = append(cond, entry{f, e.cond[i]})
			}
			if hasPrev && e.hasC&(1<<(i+3)) != 0 {
				e.cond[i+3].CopyTo(prev.Map().PutEmpty(f))
			}
		}
		if hasPrev {
			cond = append(cond, entry{"previous", prev})
		}
		if !addMap("details", cond) {
			return false, false
		}
	}
	addText("eventType", e.eventType.Str())
	if s := lr.SeverityText(); s != "" {
		addText("level", s)
	}
	if e.has&hasGeneration != 0 && !add("observedGeneration", e.generation) {
		return false, false
	}
	addText("progressEventType", lr.EventName())
	if !addMap("resource", e.resource) || !addMap("scope", e.scope) {
		return false, false
	}
	if e.has&hasSequence != 0 && !add("sequence", e.sequence) {
		return false, false
	}
	if sid := lr.SpanID(); !sid.IsEmpty() {
		addText("spanId", view(hex.AppendEncode(tb[:0], sid[:])))
	}
	if e.has&hasTenant != 0 && !add("tenant", e.tenant) {
		return false, false
	}
	if tid := lr.TraceID(); !tid.IsEmpty() {
		addText("traceId", view(hex.AppendEncode(tb[:0], tid[:])))
	}
	for _, t := range e.tracectx {
		if !add(t.key, t.val) {
			return false, false
		}
	}
	if e.has&hasTruncated != 0 && !add("truncated", e.truncated) {
		return false, false
	}
	slices.SortStableFunc(w.ms, func(x, y member) int { return strings.Compare(x.key, y.key) })
	return event, true
}

// appendEntries appends entries as one JSON object, as appendBodyMap
// appends a map. The values are encoded into c.sub first (maps inside
// them, which progress records do not have, take appendBodyMap).
func (c *check) appendEntries(b []byte, es []entry) ([]byte, error) {
	c.sub, c.ms = c.sub[:0], c.ms[:0]
	for _, e := range es {
		start := len(c.sub)
		var err error
		if c.sub, err = c.appendValue(c.sub, e.key, e.val); err != nil {
			return b, err
		}
		c.ms = append(c.ms, member{e.key, c.sub[start:len(c.sub):len(c.sub)]})
	}
	return appendMembers(b, c.ms), nil
}
