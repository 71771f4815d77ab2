package tncomessage

import (
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
)

// Record is the part of a log record a View reads. The API's *log.Record
// and the SDK's *sdk/log.Record both implement it.
type Record interface {
	EventName() string
	WalkAttributes(f func(attribute.KeyValue) bool)
}

// Kind is a record's place in the format.
type Kind uint8

const (
	KindLog        Kind = iota // any record that progress did not emit
	KindEvent                  // a progress event
	KindTransition             // a condition transition
)

// PathValue is an attribute below a prefix, its path still escaped as on
// the wire.
type PathValue struct {
	Path  string
	Value attribute.Value
}

// Condition is a transition's payload as read: strings of the record.
type Condition struct{ Status, Reason, Message string }

// View is a record split along the wire contract, in one pass over its
// attributes, without copying a string or building a map; every reader of
// the format adapts it. The rules, once for all readers:
//   - The kind comes from progress.event_type; a record without it (or
//     with another value) is an ordinary log, whose attributes other than
//     tracectx.* all stay in Extra.
//   - Typed envelope fields are taken only with their wire type
//     (generation and sequence INT64, truncated BOOL), else stay in Extra;
//     string fields are read with attribute.Value.String.
//   - A transition's payload is progress.<EventName>.<field>; other
//     progress.<x>.* keys stay in Extra.
type View struct {
	Kind Kind
	// Name is the EventName: the progressEventType, the stream, or an
	// ordinary log's event name.
	Name     string
	Details  []PathValue // below DetailsPrefix, in record order until Sort
	TraceCtx []attribute.KeyValue
	// TxID is the tracectx transaction id, when HasTx.
	TxID  string
	HasTx bool

	ComponentName, ComponentVersion                          string
	ResourceType, ResourceID, ResourceNamespace, ResourceUID string
	Scope                                                    []PathValue // below ScopePrefix
	Tenant                                                   string
	Generation, Sequence                                     int64
	HasGeneration, HasSequence, Truncated                    bool

	Transition  Condition
	Previous    Condition
	HasPrevious bool

	Extra []attribute.KeyValue

	// noDetails makes AppendMessage write the details as {} (AppendWithin's
	// second step).
	noDetails bool

	// raw holds the string fields above as the record has them, with
	// their presence, for the TNCO message (AppendMessage), which writes a
	// value with its own type and present even when empty.
	raw [numRaw]rawField
}

type rawField struct {
	v  attribute.Value
	ok bool
}

// The fields of View.raw.
const (
	rawComponentName = iota
	rawComponentVersion
	rawResourceType
	rawResourceID
	rawResourceNamespace
	rawResourceUID
	rawTenant
	rawStatus
	rawReason
	rawMessage
	rawPrevStatus
	rawPrevReason
	rawPrevMessage
	numRaw
)

// envelopeRaw returns the View.raw field of an envelope string attribute,
// or false. A switch: no hashing per attribute.
func envelopeRaw(k string) (int, bool) {
	switch k {
	case AttrComponentName:
		return rawComponentName, true
	case AttrComponentVersion:
		return rawComponentVersion, true
	case AttrResourceType:
		return rawResourceType, true
	case AttrResourceID:
		return rawResourceID, true
	case AttrResourceNamespace:
		return rawResourceNamespace, true
	case AttrResourceUID:
		return rawResourceUID, true
	case AttrTenant:
		return rawTenant, true
	}
	return 0, false
}

// transitionRaw returns the field a key names in stream's payload
// ("status", "previous.reason", ...) and its View.raw field, or false when
// the key is not part of stream's payload. It allocates nothing.
func transitionRaw(key, stream string) (field string, raw int, ok bool) {
	n := len(TransitionPrefix) + len(stream)
	if len(key) <= n+1 || !strings.HasPrefix(key, TransitionPrefix) ||
		key[len(TransitionPrefix):n] != stream || key[n] != '.' {
		return "", 0, false
	}
	switch field = key[n+1:]; field {
	case "status":
		raw = rawStatus
	case "reason":
		raw = rawReason
	case "message":
		raw = rawMessage
	case "previous.status":
		raw = rawPrevStatus
	case "previous.reason":
		raw = rawPrevReason
	case "previous.message":
		raw = rawPrevMessage
	default:
		return "", 0, false
	}
	return field, raw, true
}

// rawString returns the string field of v that raw field f is read into.
func (v *View) rawString(f int) *string {
	return [numRaw]*string{
		&v.ComponentName, &v.ComponentVersion, &v.ResourceType, &v.ResourceID, &v.ResourceNamespace,
		&v.ResourceUID, &v.Tenant, &v.Transition.Status, &v.Transition.Reason, &v.Transition.Message,
		&v.Previous.Status, &v.Previous.Reason, &v.Previous.Message,
	}[f]
}

var viewPool = sync.Pool{New: func() any {
	return &View{Details: make([]PathValue, 0, 32), Extra: make([]attribute.KeyValue, 0, 8)}
}}

// GetView returns an empty View from a pool; PutView returns it.
func GetView() *View { return viewPool.Get().(*View) }

// PutView returns v to the pool. v must not be used afterwards.
func PutView(v *View) {
	if cap(v.Details) > 4096 || cap(v.Extra) > 4096 {
		return // do not keep outsized buffers alive
	}
	v.Reset()
	viewPool.Put(v)
}

// Reset empties v, keeping its buffers.
func (v *View) Reset() {
	clear(v.Details)
	clear(v.TraceCtx)
	clear(v.Scope)
	clear(v.Extra)
	*v = View{Details: v.Details[:0], TraceCtx: v.TraceCtx[:0], Scope: v.Scope[:0], Extra: v.Extra[:0]}
}

// Load fills an empty v from r. The strings and values of v are r's.
func (v *View) Load(r Record) {
	v.Name = r.EventName()
	var et string
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		if kv.Key == AttrEventType {
			et = kv.Value.AsString()
			return false
		}
		return true
	})
	switch et {
	case EventType:
		v.Kind = KindEvent
	case TransitionEventType:
		v.Kind = KindTransition
	default:
		v.Kind = KindLog
	}
	r.WalkAttributes(v.add)
}

// keep records field f's value as the record has it and returns it as a
// string.
func (v *View) keep(f int, val attribute.Value) string {
	v.raw[f] = rawField{val, true}
	return val.String()
}

// HasResource reports whether any resource field is set.
func (v *View) HasResource() bool {
	return v.ResourceType != "" || v.ResourceID != "" || v.ResourceNamespace != "" || v.ResourceUID != ""
}

func (v *View) add(kv attribute.KeyValue) bool {
	k := string(kv.Key)
	if strings.HasPrefix(k, TraceCtxPrefix) {
		v.TraceCtx = append(v.TraceCtx, kv)
		if k == TxKey {
			v.TxID, v.HasTx = kv.Value.String(), true
		}
		return true
	}
	if v.Kind == KindLog {
		v.Extra = append(v.Extra, kv)
		return true
	}
	if v.Kind == KindTransition {
		if _, f, ok := transitionRaw(k, v.Name); ok {
			*v.rawString(f) = v.keep(f, kv.Value)
			v.HasPrevious = v.HasPrevious || f >= rawPrevStatus
			return true
		}
	}
	if strings.HasPrefix(k, DetailsPrefix) {
		v.Details = append(v.Details, PathValue{k[len(DetailsPrefix):], kv.Value})
		return true
	}
	if f, ok := envelopeRaw(k); ok {
		*v.rawString(f) = v.keep(f, kv.Value)
		return true
	}
	switch {
	case k == AttrEventType:
	case strings.HasPrefix(k, ScopePrefix):
		v.Scope = append(v.Scope, PathValue{k[len(ScopePrefix):], kv.Value})
	case k == AttrObservedGeneration && kv.Value.Type() == attribute.INT64:
		v.Generation, v.HasGeneration = kv.Value.AsInt64(), true
	case k == AttrSequence && kv.Value.Type() == attribute.INT64:
		v.Sequence, v.HasSequence = kv.Value.AsInt64(), true
	case k == AttrTruncated && kv.Value.Type() == attribute.BOOL:
		v.Truncated = kv.Value.AsBool()
	default:
		v.Extra = append(v.Extra, kv)
	}
	return true
}
