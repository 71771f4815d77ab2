package progress_test

import (
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/progress/wire"
)

// detailsSize is the encoded size of a record's details as progress.Limits
// defines it, computed here from the record alone: each detail key costs
// its length, each value 8 bytes plus its string bytes, each map or slice
// value 8 bytes plus its entries (a map entry's key costs its length).
func detailsSize(r *sdklog.Record) int {
	n := 0
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		if strings.HasPrefix(string(kv.Key), wire.DetailsPrefix) {
			n += len(kv.Key) + valueSize(kv.Value)
		}
		return true
	})
	return n
}

func valueSize(v attribute.Value) int {
	const cost = 8
	switch v.Type() {
	case attribute.STRING:
		return cost + len(v.AsString())
	case attribute.BYTESLICE:
		return cost + len(v.AsByteSlice())
	case attribute.SLICE:
		n := cost
		for _, e := range v.AsSlice() {
			n += valueSize(e)
		}
		return n
	case attribute.MAP:
		n := cost
		for _, kv := range v.AsMap() {
			n += len(kv.Key) + valueSize(kv.Value)
		}
		return n
	case attribute.STRINGSLICE:
		n := cost
		for _, s := range v.AsStringSlice() {
			n += cost + len(s)
		}
		return n
	case attribute.INT64SLICE:
		return cost + cost*len(v.AsInt64Slice())
	case attribute.FLOAT64SLICE:
		return cost + cost*len(v.AsFloat64Slice())
	case attribute.BOOLSLICE:
		return cost + cost*len(v.AsBoolSlice())
	}
	return cost
}
