package wire

import (
	"errors"

	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/internal/base/wireformat"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/tncomessage"
)

// ErrNotProgress is returned by Decode for a record that package progress
// did not emit (it has no progress.event_type attribute).
var ErrNotProgress = errors.New("wire: not a progress record")

// RecordReader is the part of a log record that Decode and AppendMessage
// read. Both the API's *log.Record and the SDK's *sdk/log.Record implement
// it.
type RecordReader interface {
	EventName() string
	WalkAttributes(f func(attribute.KeyValue) bool)
}

// Decoded is a record read back into the shape of Ignition's event.
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
	Transition *progress.Transition
	progress.Envelope
	Tenant    string
	Sequence  int64
	Truncated bool
	// TraceCtx holds the tracectx.* attributes, keyed without the prefix.
	TraceCtx map[string]string
	// Extra holds the attributes outside the wire contract.
	Extra []attribute.KeyValue
}

// Message returns the event as the TNCO message has it (Ignition's
// ResourceTransitionProgressEvent.to_dict()): eventType, progressEventType
// and the nested details.
func (d *Decoded) Message() map[string]any {
	return map[string]any{tncomessage.MemberEventType: d.EventType, tncomessage.MemberProgressEventType: d.ProgressEventType, tncomessage.MemberDetails: d.Details}
}

// Decode reads a record emitted by package progress back into its parts:
// the inverse of Record and RecordTransition. Values come back in their
// JSON-like Go types: string, bool, int64, float64, nil, []any and
// map[string]any. An empty nested map comes back as an empty map.
//
// For records progress did not build, the rules of the one reader behind
// every format apply: among repeated detail paths the last wins, and a
// nested map wins over a leaf on its path.
func Decode(r RecordReader) (Decoded, error) {
	v := tncomessage.GetView()
	defer tncomessage.PutView(v)
	v.Load(r)
	var d Decoded
	switch v.Kind {
	case tncomessage.KindEvent:
		d.EventType = EventType
		d.ProgressEventType = v.Name
		d.Details = nestMap(v.Details)
	case tncomessage.KindTransition:
		d.EventType = TransitionEventType
		t := &progress.Transition{Stream: v.Name}
		t.Condition = progress.Condition(v.Transition)
		if v.HasPrevious {
			p := progress.Condition(v.Previous)
			t.Previous = &p
		}
		d.Transition = t
	default:
		return d, ErrNotProgress
	}
	d.Component = progress.Component{Name: v.ComponentName, Version: v.ComponentVersion}
	d.Resource = progress.Resource{Type: v.ResourceType, ID: v.ResourceID, Namespace: v.ResourceNamespace, UID: v.ResourceUID}
	for _, s := range v.Scope {
		if d.Scope == nil {
			d.Scope = make(map[string]string, len(v.Scope))
		}
		d.Scope[tncomessage.UnescapeSegment(s.Path)] = s.Value.String()
	}
	d.ObservedGeneration = v.Generation
	d.Tenant, d.Sequence, d.Truncated = v.Tenant, v.Sequence, v.Truncated
	for _, kv := range v.TraceCtx {
		if d.TraceCtx == nil {
			d.TraceCtx = make(map[string]string, len(v.TraceCtx))
		}
		d.TraceCtx[string(kv.Key[len(TraceCtxPrefix):])] = kv.Value.String()
	}
	if len(v.Extra) > 0 {
		d.Extra = append([]attribute.KeyValue(nil), v.Extra...)
	}
	return d, nil
}

// nestMap builds the nested details map.
func nestMap(d []tncomessage.PathValue) map[string]any {
	root := map[string]any{}
	var buf [16]map[string]any
	stack := append(buf[:0], root)
	tncomessage.Nest(d, func(op tncomessage.NestOp, key string, val attribute.Value) {
		top := stack[len(stack)-1]
		switch op {
		case tncomessage.Open:
			m := map[string]any{}
			top[key] = m
			stack = append(stack, m)
		case tncomessage.Leaf:
			top[key] = wireformat.ValueOf(val)
		case tncomessage.Close:
			stack = stack[:len(stack)-1]
		}
	})
	return root
}
