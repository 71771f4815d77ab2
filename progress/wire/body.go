package wire

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/internal/wireformat"
)

// MessageBody returns a progress event as the nested TNCO message body, a
// MAP value: {eventType, progressEventType, details}, the details nested
// back as Decode nests them (Decoded.Message is the same as Go values). It
// reports false for records that are not progress events (transitions and
// ordinary logs). Leaf values are the record's own attribute values.
//
// It exists for destinations that cannot unflatten attributes themselves
// (the Collector's OTTL cannot): otelbridge puts it in the body of the
// records it sends over OTLP.
func MessageBody(r RecordReader) (attribute.Value, bool) {
	v := wireformat.GetView()
	defer wireformat.PutView(v)
	v.Load(r)
	if v.Kind != wireformat.KindEvent {
		return attribute.Value{}, false
	}
	return attribute.MapValue(
		attribute.String("eventType", EventType),
		attribute.String("progressEventType", v.Name),
		attribute.KeyValue{Key: "details", Value: nestValue(v.Details)},
	), true
}

// nestValue builds the nested details as one MAP value.
func nestValue(d []wireformat.PathValue) attribute.Value {
	var kvs []attribute.KeyValue // entries of the open maps, in a stack
	var buf [16]int
	starts := append(buf[:0], 0) // where each open map's entries begin
	var keys [16]string
	open := keys[:0]
	wireformat.Nest(d, func(op wireformat.NestOp, key string, val attribute.Value) {
		switch op {
		case wireformat.Open:
			open = append(open, key)
			starts = append(starts, len(kvs))
		case wireformat.Leaf:
			kvs = append(kvs, attribute.KeyValue{Key: attribute.Key(key), Value: val})
		case wireformat.Close:
			start := starts[len(starts)-1]
			starts = starts[:len(starts)-1]
			m := attribute.MapValue(kvs[start:]...)
			kvs = append(kvs[:start], attribute.KeyValue{Key: attribute.Key(open[len(open)-1]), Value: m})
			open = open[:len(open)-1]
		}
	})
	return attribute.MapValue(kvs...)
}
