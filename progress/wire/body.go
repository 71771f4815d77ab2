package wire

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/internal/base/wireformat"
)

// MessageBody returns a progress event as the nested seed body, a MAP
// value: {eventType, progressEventType, details}, the details nested back
// as Decode nests them (Decoded.Message is the same as Go values). It
// reports false for records that are not progress events (transitions and
// ordinary logs). Leaf values are the record's own attribute values.
//
// AppendMessage writes the whole TNCO message, the envelope included, as
// JSON; otelbridge sends that. The collector still accepts this body from
// drivers built on earlier releases and takes the details from it.
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
		attribute.KeyValue{Key: "details", Value: wireformat.NestValue(v.Details)},
	), true
}
