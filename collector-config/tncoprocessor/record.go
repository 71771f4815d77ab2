package tncoprocessor

import (
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/tncomessage"
)

// record is a pdata log record as the message builder reads it
// (tncomessage.Record). Of a key the record repeats, which OTLP allows and
// the SDKs do not send, only the first is read, as routing/tenant and
// every OTTL path read it (pcommon.Map.Get): the message and the route
// always agree on the tenant. A repeated detail key is the exception: the
// builder keeps the last (tncomessage.Nest), and routing never reads one.
type record struct {
	lr   plog.LogRecord
	seen []string // the keys read so far, but detail keys
}

func (r *record) EventName() string { return r.lr.EventName() }

func (r *record) WalkAttributes(f func(attribute.KeyValue) bool) {
	attrs := r.lr.Attributes()
	clear(r.seen)
	r.seen = r.seen[:0]
	for k, v := range attrs.All() {
		if !strings.HasPrefix(k, tncomessage.DetailsPrefix) {
			// A linear search: a record has a dozen such keys.
			if slices.Contains(r.seen, k) {
				continue
			}
			r.seen = append(r.seen, k)
		}
		if !f(attribute.KeyValue{Key: attribute.Key(k), Value: valueOf(v)}) {
			return
		}
	}
}

// meta is what the message takes from the record besides its attributes.
func meta(lr plog.LogRecord) tncomessage.MessageMeta {
	return tncomessage.MessageMeta{
		TimeUnixNano: max(0, int64(lr.Timestamp())),
		SeverityText: lr.SeverityText(),
		TraceID:      lr.TraceID(),
		SpanID:       lr.SpanID(),
	}
}

// valueOf is v as an attribute value: the builder writes it as
// encoding/json writes v.AsRaw() (bytes as base64, empty as null). A
// scalar costs nothing; slices and maps, which progress records rarely
// hold (details are flattened), are copied.
func valueOf(v pcommon.Value) attribute.Value {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return attribute.StringValue(v.Str())
	case pcommon.ValueTypeInt:
		return attribute.Int64Value(v.Int())
	case pcommon.ValueTypeDouble:
		return attribute.Float64Value(v.Double())
	case pcommon.ValueTypeBool:
		return attribute.BoolValue(v.Bool())
	case pcommon.ValueTypeBytes:
		return attribute.ByteSliceValue(v.Bytes().AsRaw())
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		vals := make([]attribute.Value, s.Len())
		for i := range vals {
			vals[i] = valueOf(s.At(i))
		}
		return attribute.SliceValue(vals...)
	case pcommon.ValueTypeMap:
		m := v.Map()
		kvs := make([]attribute.KeyValue, 0, m.Len())
		for k, e := range m.All() {
			kvs = append(kvs, attribute.KeyValue{Key: attribute.Key(k), Value: valueOf(e)})
		}
		return attribute.MapValue(kvs...)
	}
	return attribute.Value{}
}
