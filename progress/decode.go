package progress

import (
	"errors"
	"strings"

	"go.opentelemetry.io/otel/attribute"
)

// ErrNotProgress is returned by Decode for a record that this package did
// not emit (it has no progress.event_type attribute).
var ErrNotProgress = errors.New("progress: not a progress record")

// RecordReader is the part of a log record that Decode reads. Both the API's
// *log.Record and the SDK's *sdk/log.Record implement it.
type RecordReader interface {
	EventName() string
	WalkAttributes(f func(attribute.KeyValue) bool)
}

// Decoded is a record read back into the seed's shape.
type Decoded struct {
	// EventType is EventType or TransitionEventType.
	EventType string
	// ProgressEventType is the record's EventName for a progress event.
	ProgressEventType string
	// Details are the event's details, nested back. Never nil for a
	// progress event; nil for a transition.
	Details map[string]any
	// Transition is set for a condition transition (its Envelope and Time
	// are left zero: see Decoded.Envelope).
	Transition *Transition
	Envelope
	Tenant    string
	Sequence  int64
	Truncated bool
	// TraceCtx holds the tracectx.* attributes, keyed without the prefix.
	TraceCtx map[string]string
	// Extra holds the attributes outside the wire contract.
	Extra []attribute.KeyValue
}

// Seed returns the event in the seed-000 schema: eventType,
// progressEventType and nested details.
func (d *Decoded) Seed() map[string]any {
	return map[string]any{"eventType": d.EventType, "progressEventType": d.ProgressEventType, "details": d.Details}
}

// Decode reads a record emitted by a Recorder back into its parts: the
// inverse of Record and RecordTransition. Values come back in their
// JSON-like Go types: string, bool, int64, float64, nil, []any and
// map[string]any. An empty nested map comes back as an empty map.
func Decode(r RecordReader) (Decoded, error) {
	var d Decoded
	var stream string
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		k := string(kv.Key)
		switch {
		case k == AttrEventType:
			d.EventType = kv.Value.AsString()
		case strings.HasPrefix(k, DetailsPrefix):
			if d.Details == nil {
				d.Details = map[string]any{}
			}
			setPath(d.Details, k[len(DetailsPrefix):], ValueOf(kv.Value))
		case k == AttrComponentName:
			d.Component.Name = kv.Value.AsString()
		case k == AttrComponentVersion:
			d.Component.Version = kv.Value.AsString()
		case k == AttrResourceType:
			d.Resource.Type = kv.Value.AsString()
		case k == AttrResourceID:
			d.Resource.ID = kv.Value.AsString()
		case k == AttrResourceNamespace:
			d.Resource.Namespace = kv.Value.AsString()
		case k == AttrResourceUID:
			d.Resource.UID = kv.Value.AsString()
		case strings.HasPrefix(k, ScopePrefix):
			if d.Scope == nil {
				d.Scope = map[string]string{}
			}
			d.Scope[unescapeSegment(k[len(ScopePrefix):])] = kv.Value.AsString()
		case k == AttrObservedGeneration:
			d.ObservedGeneration = kv.Value.AsInt64()
		case k == AttrTenant:
			d.Tenant = kv.Value.AsString()
		case k == AttrSequence:
			d.Sequence = kv.Value.AsInt64()
		case k == AttrTruncated:
			d.Truncated = kv.Value.AsBool()
		case strings.HasPrefix(k, TraceCtxPrefix):
			if d.TraceCtx == nil {
				d.TraceCtx = map[string]string{}
			}
			d.TraceCtx[k[len(TraceCtxPrefix):]] = kv.Value.String()
		default:
			d.Extra = append(d.Extra, kv)
		}
		return true
	})
	switch d.EventType {
	case EventType:
		d.ProgressEventType = r.EventName()
		if d.Details == nil {
			d.Details = map[string]any{}
		}
	case TransitionEventType:
		stream = r.EventName()
		d.Transition = decodeTransition(stream, &d.Extra)
	default:
		return d, ErrNotProgress
	}
	return d, nil
}

// decodeTransition takes the progress.<stream>.* attributes out of extra.
func decodeTransition(stream string, extra *[]attribute.KeyValue) *Transition {
	t := &Transition{Stream: stream}
	k := transitionKeysFor(stream)
	kept := (*extra)[:0]
	for _, kv := range *extra {
		switch kv.Key {
		case k.status:
			t.Status = kv.Value.AsString()
		case k.reason:
			t.Reason = kv.Value.AsString()
		case k.message:
			t.Message = kv.Value.AsString()
		case k.prevStatus:
			t.prev().Status = kv.Value.AsString()
		case k.prevReason:
			t.prev().Reason = kv.Value.AsString()
		case k.prevMessage:
			t.prev().Message = kv.Value.AsString()
		default:
			kept = append(kept, kv)
		}
	}
	clear((*extra)[len(kept):])
	*extra = kept
	if len(kept) == 0 {
		*extra = nil
	}
	return t
}

func (t *Transition) prev() *Condition {
	if t.Previous == nil {
		t.Previous = &Condition{}
	}
	return t.Previous
}

// setPath stores v at the escaped, separator-joined path in m. When a path
// runs through a leaf (possible only for records not built by this
// package), the nested map replaces the leaf.
func setPath(m map[string]any, path string, v any) {
	for {
		i := strings.Index(path, DetailsSeparator)
		if i < 0 {
			m[unescapeSegment(path)] = v
			return
		}
		seg := unescapeSegment(path[:i])
		next, ok := m[seg].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[seg] = next
		}
		m, path = next, path[i+len(DetailsSeparator):]
	}
}

// ValueOf converts an attribute value to its JSON-like Go value: string,
// bool, int64, float64, []byte, nil, []any or map[string]any.
func ValueOf(v attribute.Value) any {
	switch v.Type() {
	case attribute.STRING:
		return v.AsString()
	case attribute.BOOL:
		return v.AsBool()
	case attribute.INT64:
		return v.AsInt64()
	case attribute.FLOAT64:
		return v.AsFloat64()
	case attribute.BYTESLICE:
		return v.AsByteSlice()
	case attribute.MAP:
		kvs := v.AsMap()
		m := make(map[string]any, len(kvs))
		for _, kv := range kvs {
			m[string(kv.Key)] = ValueOf(kv.Value)
		}
		return m
	case attribute.SLICE:
		vals := v.AsSlice()
		out := make([]any, len(vals))
		for i, el := range vals {
			out[i] = ValueOf(el)
		}
		return out
	case attribute.STRINGSLICE:
		return anySlice(v.AsStringSlice())
	case attribute.INT64SLICE:
		return anySlice(v.AsInt64Slice())
	case attribute.FLOAT64SLICE:
		return anySlice(v.AsFloat64Slice())
	case attribute.BOOLSLICE:
		return anySlice(v.AsBoolSlice())
	}
	return nil
}

func anySlice[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
