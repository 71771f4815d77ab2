package wireformat

import (
	"strings"

	"github.com/progressotel/progressotel/tncomessage"
	"go.opentelemetry.io/otel/attribute"
)

// ValueCost is what every value costs in the encoded size, on top of its
// string bytes, so that counts cost what they are: a million empty strings
// or nested empty slices are not free.
const ValueCost = 8

// DetailsSize is the encoded size of a record's details, the measure
// progress.Limits.MaxDetailsBytes caps, computed from the attributes
// alone: each detail key costs its length, each value ValueCost plus its
// string bytes, each map or slice value ValueCost plus its entries (a map
// entry's key costs its length). The encoder charges the same measure as
// it writes; the tests hold its accounting against this function.
func DetailsSize(attrs []attribute.KeyValue) int {
	n := 0
	for _, kv := range attrs {
		if strings.HasPrefix(string(kv.Key), tncomessage.DetailsPrefix) {
			n += len(kv.Key) + ValueSize(kv.Value)
		}
	}
	return n
}

// ValueSize is one value's share of DetailsSize.
func ValueSize(v attribute.Value) int {
	switch v.Type() {
	case attribute.STRING:
		return ValueCost + len(v.AsString())
	case attribute.BYTESLICE:
		return ValueCost + len(v.AsByteSlice())
	case attribute.SLICE:
		n := ValueCost
		for _, e := range v.AsSlice() {
			n += ValueSize(e)
		}
		return n
	case attribute.MAP:
		n := ValueCost
		for _, kv := range v.AsMap() {
			n += len(kv.Key) + ValueSize(kv.Value)
		}
		return n
	case attribute.STRINGSLICE:
		n := ValueCost
		for _, s := range v.AsStringSlice() {
			n += ValueCost + len(s)
		}
		return n
	case attribute.INT64SLICE:
		return ValueCost * (1 + len(v.AsInt64Slice()))
	case attribute.FLOAT64SLICE:
		return ValueCost * (1 + len(v.AsFloat64Slice()))
	case attribute.BOOLSLICE:
		return ValueCost * (1 + len(v.AsBoolSlice()))
	}
	return ValueCost
}
