package tncomessage

import (
	"encoding/hex"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
)

// MessageMeta is what the TNCO message takes from a record besides its
// attributes and event name.
type MessageMeta struct {
	// TimeUnixNano is the record's time as OTLP carries it; @timestamp is
	// written when it is positive.
	TimeUnixNano int64
	SeverityText string
	TraceID      [16]byte
	SpanID       [8]byte
}

// MessageTimeLayout is the layout of @timestamp: RFC 3339 in UTC with
// exactly three fractional digits (cut, not rounded), so that the strings
// have one width and sort by time.
const MessageTimeLayout = "2006-01-02T15:04:05.000Z"

// The prefixes of the envelope keys the message nests.
const (
	componentRoot = "progress.component."
	resourceRoot  = "progress.resource."
)

// AppendMessage appends the TNCO message of the progress record in v (an
// event or a transition; nothing for an ordinary log) to b, exactly as
// collector-config's pipeline writes it (docs/collector.md, "The TNCO
// message"). Keys are in byte order at every level, as encoding/json
// writes a map:
//
//	@timestamp, component, details, eventType, level, observedGeneration,
//	progressEventType, resource, scope, sequence, spanId, tenant, traceId,
//	tracectx.<name>..., truncated
//
// Envelope fields are present only when the record has them; a
// transition's details are {message?, previous?: {message?, reason,
// status}, reason, status}.
func AppendMessage(b []byte, v *View, m MessageMeta) []byte {
	if v.Kind == KindLog {
		return b
	}
	s := getScratch()
	defer putScratch(s)
	// Attributes the View leaves in Extra that the message still places:
	// envelope fields of another type than the contract's, and further
	// keys below the component and resource prefixes.
	var generation, sequence, truncated, tenant *attribute.Value
	for i := range v.Extra {
		kv := &v.Extra[i]
		switch k := string(kv.Key); {
		case k == AttrObservedGeneration:
			generation = &kv.Value
		case k == AttrSequence:
			sequence = &kv.Value
		case k == AttrTruncated:
			truncated = &kv.Value
		case k == AttrTenant:
			tenant = &kv.Value
		case strings.HasPrefix(k, componentRoot):
			s.component = append(s.component, attribute.KeyValue{Key: attribute.Key(k[len(componentRoot):]), Value: kv.Value})
		case strings.HasPrefix(k, resourceRoot):
			s.resource = append(s.resource, attribute.KeyValue{Key: attribute.Key(k[len(resourceRoot):]), Value: kv.Value})
		}
	}

	b = append(b, '{')
	first := true
	key := func(k string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = AppendStdString(b, k)
		b = append(b, ':')
	}
	// field writes k: the Extra attribute when the record has one, else
	// the View's value when it has one.
	field := func(k string, extra *attribute.Value, has bool, val attribute.Value) {
		if extra != nil {
			val, has = *extra, true
		}
		if has {
			key(k)
			b = AppendStdValue(b, val)
		}
	}
	if m.TimeUnixNano > 0 {
		key(MemberTimestamp)
		b = append(b, '"')
		b = appendTimestamp(b, m.TimeUnixNano)
		b = append(b, '"')
	}
	s.component = v.appendRaw(s.component, rawComponentName, "name")
	s.component = v.appendRaw(s.component, rawComponentVersion, "version")
	if len(s.component) > 0 {
		key(MemberComponent)
		b = AppendStdMap(b, s.component)
	}
	key(MemberDetails)
	if v.noDetails {
		b = append(b, "{}"...)
	} else if v.Kind == KindEvent {
		b = AppendNestedJSON(b, v.Details, StdEscapes)
	} else {
		b = appendTransition(b, v)
	}
	key(MemberEventType)
	if v.Kind == KindEvent {
		b = AppendStdString(b, EventType)
	} else {
		b = AppendStdString(b, TransitionEventType)
	}
	if m.SeverityText != "" {
		key(MemberLevel)
		b = AppendStdString(b, m.SeverityText)
	}
	field(MemberObservedGeneration, generation, v.HasGeneration, attribute.Int64Value(v.Generation))
	key(MemberProgressEventType)
	b = AppendStdString(b, v.Name)
	s.resource = v.appendRaw(s.resource, rawResourceID, "id")
	s.resource = v.appendRaw(s.resource, rawResourceNamespace, "namespace")
	s.resource = v.appendRaw(s.resource, rawResourceType, "type")
	s.resource = v.appendRaw(s.resource, rawResourceUID, "uid")
	if len(s.resource) > 0 {
		key(MemberResource)
		b = AppendStdMap(b, s.resource)
	}
	if len(v.Scope) > 0 {
		for _, p := range v.Scope { // keys as on the wire (escaped), as the collector has them
			s.scope = append(s.scope, attribute.KeyValue{Key: attribute.Key(p.Path), Value: p.Value})
		}
		key(MemberScope)
		b = AppendStdMap(b, s.scope)
	}
	field(MemberSequence, sequence, v.HasSequence, attribute.Int64Value(v.Sequence))
	if m.SpanID != [8]byte{} {
		key(MemberSpanID)
		b = appendHex(b, m.SpanID[:])
	}
	field(MemberTenant, tenant, v.raw[rawTenant].ok, v.raw[rawTenant].v)
	if m.TraceID != [16]byte{} {
		key(MemberTraceID)
		b = appendHex(b, m.TraceID[:])
	}
	if len(v.TraceCtx) > 0 {
		// The members of one object, so in the same order and with the
		// same rule for a repeated key as the other keys (progressEventType
		// came before).
		b = appendMembers(append(b, ','), v.TraceCtx)
	}
	field(MemberTruncated, truncated, v.Truncated, attribute.BoolValue(true))
	return append(b, '}')
}

// appendMembers appends the members of AppendStdMap(kvs) without its
// braces.
func appendMembers(b []byte, kvs []attribute.KeyValue) []byte {
	n := len(b)
	b = AppendStdMap(b, kvs)
	copy(b[n:], b[n+1:len(b)-1])
	return b[:len(b)-2]
}

func appendHex(b []byte, id []byte) []byte {
	b = append(b, '"')
	b = hex.AppendEncode(b, id)
	return append(b, '"')
}

// appendTransition writes a transition's details: the new condition and,
// when the record has the previous status, the previous one. Status and
// reason are always there (null when the record lacks them), messages
// only when the record has them.
func appendTransition(b []byte, v *View) []byte {
	b = append(b, '{')
	member := func(b []byte, k string) []byte { return append(AppendStdString(b, k), ':') }
	if f := v.raw[rawMessage]; f.ok {
		b = append(AppendStdValue(member(b, MemberMessage), f.v), ',')
	}
	if f := v.raw[rawPrevStatus]; f.ok {
		b = append(member(b, MemberPrevious), '{')
		if m := v.raw[rawPrevMessage]; m.ok {
			b = append(AppendStdValue(member(b, MemberMessage), m.v), ',')
		}
		b = append(AppendStdValue(member(b, MemberReason), v.raw[rawPrevReason].v), ',')
		b = append(AppendStdValue(member(b, MemberStatus), f.v), "},"...)
	}
	b = append(AppendStdValue(member(b, MemberReason), v.raw[rawReason].v), ',')
	b = AppendStdValue(member(b, MemberStatus), v.raw[rawStatus].v)
	return append(b, '}')
}

// appendRaw appends field f under key when the record has it.
func (v *View) appendRaw(kvs []attribute.KeyValue, f int, key string) []attribute.KeyValue {
	if r := v.raw[f]; r.ok {
		kvs = append(kvs, attribute.KeyValue{Key: attribute.Key(key), Value: r.v})
	}
	return kvs
}

// NestValue builds the nested details as one MAP value, following Nest.
func NestValue(d []PathValue) attribute.Value {
	var kvs []attribute.KeyValue // entries of the open maps, in a stack
	var buf [16]int
	starts := append(buf[:0], 0) // where each open map's entries begin
	var keys [16]string
	open := keys[:0]
	Nest(d, func(op NestOp, key string, val attribute.Value) {
		switch op {
		case Open:
			open = append(open, key)
			starts = append(starts, len(kvs))
		case Leaf:
			kvs = append(kvs, attribute.KeyValue{Key: attribute.Key(key), Value: val})
		case Close:
			start := starts[len(starts)-1]
			starts = starts[:len(starts)-1]
			m := attribute.MapValue(kvs[start:]...)
			kvs = append(kvs[:start], attribute.KeyValue{Key: attribute.Key(open[len(open)-1]), Value: m})
			open = open[:len(open)-1]
		}
	})
	return attribute.MapValue(kvs...)
}

// scratch holds the entry lists of one AppendMessage call.
type scratch struct {
	component, resource, scope []attribute.KeyValue
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

func putScratch(s *scratch) {
	if cap(s.scope) > 256 {
		return
	}
	clear(s.component)
	clear(s.resource)
	clear(s.scope)
	*s = scratch{component: s.component[:0], resource: s.resource[:0], scope: s.scope[:0]}
	scratchPool.Put(s)
}

// secondText is the text of one second of @timestamp, up to the dot.
type secondText struct {
	sec  int64
	text string
}

// lastSecond is the second last formatted: the records of a batch share
// it, so formatting is mostly a copy.
var lastSecond atomic.Pointer[secondText]

// appendTimestamp appends the positive time ns in MessageTimeLayout.
func appendTimestamp(b []byte, ns int64) []byte {
	sec, ms := ns/1e9, ns%1e9/1e6
	st := lastSecond.Load()
	if st == nil || st.sec != sec {
		st = &secondText{sec, time.Unix(sec, 0).UTC().Format(MessageTimeLayout[:len("2006-01-02T15:04:05")])}
		lastSecond.Store(st)
	}
	b = append(b, st.text...)
	return append(b, '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z')
}
