package wireformat

import "go.opentelemetry.io/otel/attribute"

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
