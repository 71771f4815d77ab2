package propagation

import (
	"context"
	"slices"
	"strings"
)

// Values is the set of tracectx values of a request: names lower-cased
// without the "x-tracectx-" prefix ("transactionid", "processid",
// "tenantid", ...), each with its value. The zero Values is empty. Values
// is immutable: the With methods return a copy.
type Values struct {
	kv []kv // sorted by key
}

type kv struct{ k, v string }

type valuesKey struct{}

// FromContext returns the tracectx values carried by ctx.
func FromContext(ctx context.Context) Values {
	if ctx == nil {
		return Values{}
	}
	v, _ := ctx.Value(valuesKey{}).(Values)
	return v
}

// ContextWithValues returns a copy of ctx carrying v in place of any
// tracectx values it had.
func ContextWithValues(ctx context.Context, v Values) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithValue(ctx, valuesKey{}, v)
}

// Len is the number of values.
func (v Values) Len() int { return len(v.kv) }

// Get returns the value of key (case-insensitive, without the prefix).
func (v Values) Get(key string) (string, bool) {
	key = strings.ToLower(key)
	i, ok := slices.BinarySearchFunc(v.kv, key, func(e kv, k string) int { return strings.Compare(e.k, k) })
	if !ok {
		return "", false
	}
	return v.kv[i].v, true
}

// All calls f for each key and value in key order until f returns false.
func (v Values) All(f func(key, value string) bool) {
	for _, e := range v.kv {
		if !f(e.k, e.v) {
			return
		}
	}
}

// set returns a copy of v with key set to value; key must be normalised.
func (v Values) set(key, value string) Values {
	i, ok := slices.BinarySearchFunc(v.kv, key, func(e kv, k string) int { return strings.Compare(e.k, k) })
	out := make([]kv, len(v.kv), len(v.kv)+1)
	copy(out, v.kv)
	if ok {
		out[i].v = value
		return Values{out}
	}
	return Values{slices.Insert(out, i, kv{key, value})}
}
