package tncomessage

import (
	"cmp"
	"encoding/base64"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
)

// The functions below write values byte for byte as encoding/json writes
// the same value after the OTLP hop (a MAP as a map[string]any, keys
// sorted, the last of equal keys kept; a SLICE as []any; bytes as base64;
// an empty value as null), so that the TNCO message the driver builds and
// the one the collector builds are the same bytes. Tests hold them to
// encoding/json.

const lowerHex = "0123456789abcdef"

// AppendStdString appends s as a JSON string, escaped as encoding/json
// escapes it: HTML characters as \u00XX, invalid UTF-8 as \ufffd, U+2028
// and U+2029 escaped.
func AppendStdString(b []byte, s string) []byte { return AppendJSONString(b, s, StdEscapes) }

// AppendStdFloat appends f as encoding/json writes a float64. JSON cannot
// hold NaN and ±Inf (encoding/json fails on them): they are written as the
// strings "NaN", "+Inf" and "-Inf", the fallback the encoder of package
// progress writes for them in details.
func AppendStdFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"+Inf"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Inf"`...)
	}
	return AppendJSONFloat(b, f, 64)
}

// AppendStdValue appends v as encoding/json writes the value it becomes
// after the OTLP hop.
func AppendStdValue(b []byte, v attribute.Value) []byte { return AppendJSONValue(b, v, StdEscapes) }

// AppendJSONValue appends v as JSON written the way e says; NaN and ±Inf
// as the strings of AppendStdFloat, bytes as base64, an empty value as
// null.
func AppendJSONValue(b []byte, v attribute.Value, e *JSONEscapes) []byte {
	str := func(b []byte, s string) []byte { return AppendJSONString(b, s, e) }
	switch v.Type() {
	case attribute.STRING:
		return str(b, v.AsString())
	case attribute.BOOL:
		return strconv.AppendBool(b, v.AsBool())
	case attribute.INT64:
		return strconv.AppendInt(b, v.AsInt64(), 10)
	case attribute.FLOAT64:
		return AppendStdFloat(b, v.AsFloat64())
	case attribute.BYTESLICE:
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, v.AsByteSlice())
		return append(b, '"')
	case attribute.SLICE:
		return appendJSONList(b, v.AsSlice(), func(b []byte, x attribute.Value) []byte { return AppendJSONValue(b, x, e) })
	case attribute.STRINGSLICE:
		return appendJSONList(b, v.AsStringSlice(), str)
	case attribute.INT64SLICE:
		return appendJSONList(b, v.AsInt64Slice(), func(b []byte, x int64) []byte { return strconv.AppendInt(b, x, 10) })
	case attribute.FLOAT64SLICE:
		return appendJSONList(b, v.AsFloat64Slice(), AppendStdFloat)
	case attribute.BOOLSLICE:
		return appendJSONList(b, v.AsBoolSlice(), strconv.AppendBool)
	case attribute.MAP:
		return appendJSONMap(b, v.AsMap(), e)
	}
	return append(b, "null"...)
}

func appendJSONList[T any](b []byte, s []T, each func([]byte, T) []byte) []byte {
	b = append(b, '[')
	for i, x := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = each(b, x)
	}
	return append(b, ']')
}

// AppendStdMap appends kvs as encoding/json writes a map[string]any: keys
// in byte order, and of equal keys the last one (a Go map keeps the last
// value written).
func AppendStdMap(b []byte, kvs []attribute.KeyValue) []byte {
	return appendJSONMap(b, kvs, StdEscapes)
}

// appendJSONMap appends kvs as a JSON object: as AppendStdMap when e has
// goMaps, else in their order.
func appendJSONMap(b []byte, kvs []attribute.KeyValue, e *JSONEscapes) []byte {
	if e.goMaps && !strictlySorted(kvs) {
		kvs = slices.Clone(kvs)
		slices.SortStableFunc(kvs, func(x, y attribute.KeyValue) int { return cmp.Compare(x.Key, y.Key) })
		out := kvs[:0]
		for i, kv := range kvs {
			if i+1 < len(kvs) && kvs[i+1].Key == kv.Key {
				continue // a later one wins
			}
			out = append(out, kv)
		}
		kvs = out
	}
	b = append(b, '{')
	for i, kv := range kvs {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendJSONString(b, string(kv.Key), e)
		b = append(b, ':')
		b = AppendJSONValue(b, kv.Value, e)
	}
	return append(b, '}')
}

// AppendNestedJSON appends the details d nested (wire.Decode's shape),
// written the way e says, as Nest walks them. With goMaps, keys must come
// in byte order at every level, which Nest's order is unless a path holds
// escapes: then the details are built as one MAP value first.
func AppendNestedJSON(b []byte, d []PathValue, e *JSONEscapes) []byte {
	if e.goMaps {
		for _, p := range d {
			if strings.IndexByte(p.Path, '%') >= 0 {
				return AppendJSONValue(b, NestValue(d), e)
			}
		}
	}
	b = append(b, '{')
	Nest(d, func(op NestOp, key string, val attribute.Value) {
		if op == Close {
			b = append(b, '}')
			return
		}
		if b[len(b)-1] != '{' {
			b = append(b, ',')
		}
		b = AppendJSONString(b, key, e)
		b = append(b, ':')
		if op == Open {
			b = append(b, '{')
		} else {
			b = AppendJSONValue(b, val, e)
		}
	})
	return append(b, '}')
}

func strictlySorted(kvs []attribute.KeyValue) bool {
	for i := 1; i < len(kvs); i++ {
		if kvs[i-1].Key >= kvs[i].Key {
			return false
		}
	}
	return true
}
