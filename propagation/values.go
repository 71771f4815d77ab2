package propagation

import (
	"cmp"
	"context"
	"errors"
	"fmt"
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
	return context.WithValue(cmp.Or(ctx, context.Background()), valuesKey{}, v)
}

// WithValue returns a copy of ctx whose tracectx values also hold key =
// value, for values a driver sets itself ("driverrequestid",
// "externalrequestid"). key is matched case-insensitively, without the
// x-tracectx- prefix. On error (see NormalizeKey, NormalizeValue and
// ErrTooManyValues) it returns ctx unchanged and the error, so a caller may
// ignore the error and carry on.
func WithValue(ctx context.Context, key, value string) (context.Context, error) {
	v, err := FromContext(ctx).With(key, value)
	if err != nil {
		return cmp.Or(ctx, context.Background()), err
	}
	return ContextWithValues(ctx, v), nil
}

// NewValues returns the valid entries of m as Values. Invalid entries are
// left out and reported in the returned error, which joins one error per
// entry; when m has more than MaxValues valid entries, the well-known keys
// win, then the others in byte order (ErrTooManyValues). A key that occurs
// twice with different case keeps the value of the spelling that sorts
// first.
func NewValues(m map[string]string) (Values, error) {
	cands := make([]kv, 0, len(m))
	raws := make([]string, 0, len(m))
	var errs []error
	for raw := range m {
		raws = append(raws, raw)
	}
	slices.Sort(raws)
	for _, raw := range raws {
		if e, ok := normalize(raw, m[raw], &errs); ok {
			cands = append(cands, e)
		}
	}
	v, err := Values{}.merge(cands)
	if err != nil {
		errs = append(errs, err)
	}
	return v, errors.Join(errs...)
}

// normalize returns the entry key = value normalised, or adds why it is
// invalid to errs.
func normalize(key, value string, errs *[]error) (kv, bool) {
	k, err := NormalizeKey(key)
	if err != nil {
		*errs = append(*errs, err)
		return kv{}, false
	}
	val, err := NormalizeValue(value)
	if err != nil {
		*errs = append(*errs, fmt.Errorf("key %q: %w", k, err))
		return kv{}, false
	}
	return kv{k, val}, true
}

// With returns a copy of v that also holds key = value, replacing the value
// of key if v has it. key is matched case-insensitively, without the
// x-tracectx- prefix.
func (v Values) With(key, value string) (Values, error) {
	var errs []error
	e, ok := normalize(key, value, &errs)
	if !ok {
		return v, errs[0]
	}
	if _, ok := v.Get(e.k); !ok && v.Len() >= MaxValues {
		return v, fmt.Errorf("%w: key %q would be value %d, limit %d", ErrTooManyValues, e.k, v.Len()+1, MaxValues)
	}
	out, _ := v.merge([]kv{e}) // cannot drop: checked above
	return out, nil
}

// Map returns the values as a new map from key to value.
func (v Values) Map() map[string]string {
	m := make(map[string]string, len(v.kv))
	for _, e := range v.kv {
		m[e.k] = e.v
	}
	return m
}

// merge returns v with the validated candidates added, a candidate
// replacing the value of a key v has. New keys are added in priority order
// (well-known keys, then byte order) until MaxValues; the count of dropped
// keys is reported as ErrTooManyValues. A key that occurs more than once in
// cands keeps its first value.
func (v Values) merge(cands []kv) (Values, error) {
	if len(cands) == 0 {
		return v, nil
	}
	slices.SortStableFunc(cands, func(a, b kv) int {
		return cmp.Or(cmp.Compare(rank(a.k), rank(b.k)), strings.Compare(a.k, b.k))
	})
	cands = slices.CompactFunc(cands, func(a, b kv) bool { return a.k == b.k })
	out := make([]kv, len(v.kv), len(v.kv)+min(len(cands), MaxValues))
	copy(out, v.kv)
	dropped := 0
	for _, c := range cands {
		i, ok := slices.BinarySearchFunc(out, c.k, func(e kv, k string) int { return strings.Compare(e.k, k) })
		switch {
		case ok:
			out[i].v = c.v
		case len(out) < MaxValues:
			out = slices.Insert(out, i, c)
		default:
			dropped++
		}
	}
	if dropped > 0 {
		return Values{out}, fmt.Errorf("%w: %d dropped, limit %d", ErrTooManyValues, dropped, MaxValues)
	}
	return Values{out}, nil
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
