package wiretest

import (
	"bytes"
	"encoding/json"
	"testing"
)

// JSONLike is what encoding/json makes of details v, in the types
// wire.Decode returns them (int64 for whole numbers, float64, string,
// bool, nil, []any, map[string]any): the reference the encoder is held to.
// Details that are not an object give an empty map.
func JSONLike(t testing.TB, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	if m, ok := fixNumbers(out).(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

func fixNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = fixNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = fixNumbers(e)
		}
	}
	return v
}
