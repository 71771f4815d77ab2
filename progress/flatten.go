package progress

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
)

// encoder flattens one event's details into attributes. It is pooled: the
// hot path reuses its buffers.
type encoder struct {
	attrs []attribute.KeyValue
	// Scratch stacks: a call appends its entries past the current length
	// and truncates back before it returns, so nested calls share them.
	// attribute.SliceValue and MapValue copy their arguments, so the
	// scratch is free again once they return.
	sortBuf   []string
	pairs     []mapEntry
	rkeys     []reflectKey
	vals      []attribute.Value
	kvs       []attribute.KeyValue
	keys      *keyCache
	red       *Redactor
	lim       Limits
	bytes     int // string bytes written so far
	ndetails  int // detail attributes written so far
	truncated int // cuts made (limits, unsupported values)
}

// mapEntry is one entry of a map[string]any being flattened: collecting
// the values with the keys saves a lookup per key.
type mapEntry struct {
	k string
	v any
}

// reflectKey is a key of a reflected map and where its value was copied.
type reflectKey struct {
	s string
	i int
}

var encoderPool = sync.Pool{New: func() any {
	return &encoder{attrs: make([]attribute.KeyValue, 0, 32)}
}}

func getEncoder(keys *keyCache, red *Redactor, lim Limits) *encoder {
	keys.ready()
	e := encoderPool.Get().(*encoder)
	e.keys, e.red, e.lim = keys, red, lim
	return e
}

func putEncoder(e *encoder) {
	if max(cap(e.attrs), cap(e.vals), cap(e.kvs), cap(e.pairs), cap(e.sortBuf), cap(e.rkeys)) > 1024 {
		return // do not keep outsized buffers alive
	}
	// The scratch stacks are empty (and cleared) between calls; attrs
	// holds this record's values until now. Only the fields getEncoder
	// does not set are reset: every pointer write costs a write barrier
	// while the GC runs.
	clear(e.attrs)
	e.attrs = e.attrs[:0]
	e.keys, e.red = nil, nil
	e.bytes, e.ndetails, e.truncated = 0, 0, 0
	encoderPool.Put(e)
}

// details flattens an event's Details below detailsRoot.
//
// A map or struct is flattened key by key. Any other non-nil value (a
// string, a slice, ...) is kept whole under the key "value".
func (e *encoder) details(v any) {
	switch d := v.(type) {
	case nil:
		return
	case map[string]any:
		e.flattenMap(&e.keys.root, d, 1)
		return
	case map[string]string:
		e.flattenStringMap(&e.keys.root, d)
		return
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return
		}
		rv = rv.Elem()
	}
	info := typeInfoOf(rv.Type())
	switch {
	case info.marshaler:
		e.field(&e.keys.value, rv.Interface(), 1)
	case rv.Kind() == reflect.Struct:
		e.flattenStruct(&e.keys.root, rv, info, 1)
	case rv.Kind() == reflect.Map && info.mapKeyOK:
		e.flattenReflectMap(&e.keys.root, rv, info, 1)
	default:
		e.add(&e.keys.value, e.reflectValue(rv, 1))
	}
}

func (e *encoder) add(n *keyNode, v attribute.Value) {
	if e.ndetails >= e.lim.MaxAttributes {
		e.truncated++
		return
	}
	e.ndetails++
	e.attrs = append(e.attrs, attribute.KeyValue{Key: n.key, Value: v})
}

func cmpEntries(a, b mapEntry) int { return strings.Compare(a.k, b.k) }

// sortEntries sorts by key. Details maps are small: an inline insertion
// sort beats the generic sort's indirect comparisons there.
func sortEntries(p []mapEntry) {
	if len(p) > 12 {
		slices.SortFunc(p, cmpEntries)
		return
	}
	for i := 1; i < len(p); i++ {
		for j := i; j > 0 && p[j].k < p[j-1].k; j-- {
			p[j], p[j-1] = p[j-1], p[j]
		}
	}
}

func (e *encoder) flattenMap(parent *keyNode, m map[string]any, depth int) {
	start := len(e.pairs)
	for k, v := range m {
		e.pairs = append(e.pairs, mapEntry{k: k, v: v})
	}
	sortEntries(e.pairs[start:])
	// e.field may grow e.pairs: index it afresh on every step.
	for i := start; i < start+len(m); i++ {
		p := e.pairs[i]
		ent := e.keys.child(parent, p.k)
		if ent.secret {
			e.add(ent, attribute.StringValue(Redacted))
			continue
		}
		e.field(ent, p.v, depth)
	}
	clear(e.pairs[start:])
	e.pairs = e.pairs[:start]
}

func (e *encoder) flattenStringMap(parent *keyNode, m map[string]string) {
	start := len(e.sortBuf)
	for k := range m {
		e.sortBuf = append(e.sortBuf, k)
	}
	slices.Sort(e.sortBuf[start:])
	for _, k := range e.sortBuf[start:] {
		ent := e.keys.child(parent, k)
		if ent.secret {
			e.add(ent, attribute.StringValue(Redacted))
			continue
		}
		e.add(ent, e.str(m[k]))
	}
	clear(e.sortBuf[start:])
	e.sortBuf = e.sortBuf[:start]
}

// field writes one detail at key: maps and structs are flattened further,
// everything else becomes one attribute value.
func (e *encoder) field(key *keyNode, v any, depth int) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			e.add(key, attribute.MapValue())
		} else if depth >= e.lim.MaxDepth {
			e.truncated++
			e.add(key, attribute.StringValue(TruncatedDepth))
		} else {
			e.flattenMap(key, x, depth+1)
		}
		return
	case map[string]string:
		if len(x) == 0 {
			e.add(key, attribute.MapValue())
		} else if depth >= e.lim.MaxDepth {
			e.truncated++
			e.add(key, attribute.StringValue(TruncatedDepth))
		} else {
			e.flattenStringMap(key, x)
		}
		return
	}
	if val, ok := e.scalar(v); ok {
		e.add(key, val)
		return
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			e.add(key, attribute.Value{})
			return
		}
		rv = rv.Elem()
	}
	info := typeInfoOf(rv.Type())
	flattenable := !info.marshaler && (rv.Kind() == reflect.Struct || (rv.Kind() == reflect.Map && info.mapKeyOK))
	if !flattenable {
		e.add(key, e.reflectValue(rv, depth))
		return
	}
	if depth >= e.lim.MaxDepth {
		e.truncated++
		e.add(key, attribute.StringValue(TruncatedDepth))
		return
	}
	if rv.Kind() == reflect.Struct {
		if len(info.fields) == 0 {
			e.add(key, attribute.MapValue())
			return
		}
		e.flattenStruct(key, rv, info, depth+1)
		return
	}
	if rv.Len() == 0 {
		e.add(key, attribute.MapValue())
		return
	}
	e.flattenReflectMap(key, rv, info, depth+1)
}

// flattenStruct follows the type's plan: scalar fields are read directly
// and plain struct fields recursed into, with no per-field type lookups.
func (e *encoder) flattenStruct(parent *keyNode, rv reflect.Value, info *typeInfo, depth int) {
	for i := range info.fields {
		f := &info.fields[i]
		var fv reflect.Value
		if len(f.index) == 1 {
			fv = rv.Field(f.index[0])
		} else {
			var err error
			if fv, err = rv.FieldByIndexErr(f.index); err != nil {
				continue // a nil embedded pointer has no fields, as in encoding/json
			}
		}
		if (f.omitEmpty && isEmptyValue(fv)) || (f.omitZero && fv.IsZero()) {
			continue
		}
		ent := e.keys.child(parent, f.name)
		if ent.secret {
			e.add(ent, attribute.StringValue(Redacted))
			continue
		}
		switch f.kind {
		case scalarString:
			e.add(ent, e.str(fv.String()))
			continue
		case scalarBool:
			e.add(ent, attribute.BoolValue(fv.Bool()))
			continue
		case scalarInt:
			e.add(ent, attribute.Int64Value(fv.Int()))
			continue
		case scalarUint:
			e.add(ent, uintValue(fv.Uint()))
			continue
		case scalarFloat:
			e.add(ent, floatValue(fv.Float()))
			continue
		}
		if !fv.CanInterface() {
			continue
		}
		if f.plain != nil {
			e.plainStruct(ent, fv, f.plain, depth)
			continue
		}
		e.field(ent, fv.Interface(), depth)
	}
}

// plainStruct is field for a struct that is neither a marshaler nor an
// error, without boxing it into an interface first.
func (e *encoder) plainStruct(key *keyNode, rv reflect.Value, info *typeInfo, depth int) {
	if depth >= e.lim.MaxDepth {
		e.truncated++
		e.add(key, attribute.StringValue(TruncatedDepth))
		return
	}
	if len(info.fields) == 0 {
		e.add(key, attribute.MapValue())
		return
	}
	e.flattenStruct(key, rv, info, depth+1)
}

func cmpReflectKeys(a, b reflectKey) int { return strings.Compare(a.s, b.s) }

func (e *encoder) flattenReflectMap(parent *keyNode, rv reflect.Value, info *typeInfo, depth int) {
	if info.stringKeys {
		e.flattenStringKeyMap(parent, rv, info, depth)
		return
	}
	keys := sortedMapKeys(rv)
	for _, kv := range keys {
		ent := e.keys.child(parent, kv.s)
		if ent.secret {
			e.add(ent, attribute.StringValue(Redacted))
			continue
		}
		mv := rv.MapIndex(kv.v)
		if val, ok := e.reflectScalar(mv); ok {
			e.add(ent, val)
			continue
		}
		e.field(ent, mv.Interface(), depth)
	}
}

// flattenStringKeyMap flattens a map whose keys are strings. It copies the
// entries into one slice with SetIterKey/SetIterValue, so it allocates
// twice per map instead of twice per entry as MapIndex would.
func (e *encoder) flattenStringKeyMap(parent *keyNode, rv reflect.Value, info *typeInfo, depth int) {
	n := rv.Len()
	if n == 0 {
		return
	}
	t := rv.Type()
	key := reflect.New(t.Key()).Elem()
	vals := reflect.MakeSlice(info.elemSlice, n, n)
	start := len(e.rkeys)
	var it reflect.MapIter
	it.Reset(rv)
	for i := 0; it.Next() && i < n; i++ {
		key.SetIterKey(&it)
		vals.Index(i).SetIterValue(&it)
		e.rkeys = append(e.rkeys, reflectKey{s: key.String(), i: i})
	}
	end := len(e.rkeys)
	slices.SortFunc(e.rkeys[start:end], cmpReflectKeys)
	for j := start; j < end; j++ {
		k := e.rkeys[j]
		ent := e.keys.child(parent, k.s)
		if ent.secret {
			e.add(ent, attribute.StringValue(Redacted))
			continue
		}
		mv := vals.Index(k.i)
		if val, ok := e.reflectScalar(mv); ok {
			e.add(ent, val)
			continue
		}
		if info.elem != nil && info.elem.plain {
			e.plainStruct(ent, mv, info.elem, depth)
			continue
		}
		e.field(ent, mv.Interface(), depth)
	}
	clear(e.rkeys[start:])
	e.rkeys = e.rkeys[:start]
}

// str applies redaction by shape and the string limits.
func (e *encoder) str(s string) attribute.Value {
	if e.red.SecretValue(s) {
		return attribute.StringValue(Redacted)
	}
	if len(s) > e.lim.MaxStringLen {
		e.truncated++
		s = cutUTF8(s, e.lim.MaxStringLen) + TruncatedSuffix
	}
	if e.bytes+len(s) > e.lim.MaxDetailsBytes {
		e.truncated++
		return attribute.StringValue(TruncatedSuffix)
	}
	e.bytes += len(s)
	return attribute.StringValue(s)
}

func cutUTF8(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// scalar converts the common non-container values without reflection.
func (e *encoder) scalar(v any) (attribute.Value, bool) {
	switch x := v.(type) {
	case string:
		return e.str(x), true
	case bool:
		return attribute.BoolValue(x), true
	case int:
		return attribute.Int64Value(int64(x)), true
	case int64:
		return attribute.Int64Value(x), true
	case int32:
		return attribute.Int64Value(int64(x)), true
	case int16:
		return attribute.Int64Value(int64(x)), true
	case int8:
		return attribute.Int64Value(int64(x)), true
	case uint:
		return uintValue(uint64(x)), true
	case uint64:
		return uintValue(x), true
	case uint32:
		return attribute.Int64Value(int64(x)), true
	case uint16:
		return attribute.Int64Value(int64(x)), true
	case uint8:
		return attribute.Int64Value(int64(x)), true
	case float64:
		return floatValue(x), true
	case float32:
		return floatValue(float64(x)), true
	case nil:
		return attribute.Value{}, true
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return attribute.Int64Value(i), true
		}
		if f, err := x.Float64(); err == nil {
			return floatValue(f), true
		}
		return e.str(x.String()), true
	case time.Time:
		return attribute.StringValue(x.Format(time.RFC3339Nano)), true
	case time.Duration:
		return attribute.Int64Value(int64(x)), true
	case []string:
		return e.stringSlice(x), true
	case []any:
		return e.slice(x, 1), true
	case error:
		return e.str(x.Error()), true
	}
	return attribute.Value{}, false
}

func (e *encoder) stringSlice(x []string) attribute.Value {
	if len(x) > e.lim.MaxSliceLen {
		e.truncated++
		x = x[:e.lim.MaxSliceLen]
	}
	start := len(e.vals)
	for _, s := range x {
		e.vals = append(e.vals, e.str(s))
	}
	return e.popSlice(start)
}

// popSlice returns the SLICE value of e.vals[start:] and pops them. Every
// nested call has popped its own entries, so they are contiguous.
func (e *encoder) popSlice(start int) attribute.Value {
	v := attribute.SliceValue(e.vals[start:]...)
	clear(e.vals[start:])
	e.vals = e.vals[:start]
	return v
}

// popMap is popSlice for MAP values built in e.kvs.
func (e *encoder) popMap(start int) attribute.Value {
	v := attribute.MapValue(e.kvs[start:]...)
	clear(e.kvs[start:])
	e.kvs = e.kvs[:start]
	return v
}

func (e *encoder) slice(x []any, depth int) attribute.Value {
	if depth > e.lim.MaxDepth {
		e.truncated++
		return attribute.StringValue(TruncatedDepth)
	}
	if len(x) > e.lim.MaxSliceLen {
		e.truncated++
		x = x[:e.lim.MaxSliceLen]
	}
	start := len(e.vals)
	for _, el := range x {
		v := e.value(el, depth+1)
		e.vals = append(e.vals, v)
	}
	return e.popSlice(start)
}

// value converts v whole (maps become MAP values, not flattened): it is used
// inside slices, where flattening would lose the element boundaries.
func (e *encoder) value(v any, depth int) attribute.Value {
	switch x := v.(type) {
	case []any:
		return e.slice(x, depth)
	case map[string]any:
		if depth > e.lim.MaxDepth {
			e.truncated++
			return attribute.StringValue(TruncatedDepth)
		}
		// Walk the keys sorted: the string budget (MaxDetailsBytes) is
		// spent in this order, so what gets cut must not depend on map
		// iteration order.
		ks := len(e.sortBuf)
		for k := range x {
			e.sortBuf = append(e.sortBuf, k)
		}
		slices.Sort(e.sortBuf[ks:])
		start := len(e.kvs)
		for i := ks; i < ks+len(x); i++ {
			k := e.sortBuf[i]
			if e.red.SecretKey(k) {
				e.kvs = append(e.kvs, attribute.String(k, Redacted))
				continue
			}
			v := e.value(x[k], depth+1)
			e.kvs = append(e.kvs, attribute.KeyValue{Key: attribute.Key(k), Value: v})
		}
		clear(e.sortBuf[ks:])
		e.sortBuf = e.sortBuf[:ks]
		return e.popMap(start)
	}
	if val, ok := e.scalar(v); ok {
		return val
	}
	return e.reflectValue(reflect.ValueOf(v), depth)
}

func (e *encoder) reflectScalar(rv reflect.Value) (attribute.Value, bool) {
	switch rv.Kind() {
	case reflect.String:
		if rv.Type() == stringType {
			return e.str(rv.String()), true
		}
	case reflect.Bool:
		if rv.Type() == boolType {
			return attribute.BoolValue(rv.Bool()), true
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !typeInfoOf(rv.Type()).marshaler {
			return attribute.Int64Value(rv.Int()), true
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if !typeInfoOf(rv.Type()).marshaler {
			return uintValue(rv.Uint()), true
		}
	case reflect.Float32, reflect.Float64:
		if !typeInfoOf(rv.Type()).marshaler {
			return floatValue(rv.Float()), true
		}
	}
	return attribute.Value{}, false
}

var (
	stringType = reflect.TypeFor[string]()
	boolType   = reflect.TypeFor[bool]()
)

// reflectValue converts any value whole, the way encoding/json would shape
// it. See Flatten for the fallbacks.
func (e *encoder) reflectValue(rv reflect.Value, depth int) attribute.Value {
	if depth > e.lim.MaxDepth {
		e.truncated++
		return attribute.StringValue(TruncatedDepth)
	}
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return attribute.Value{}
		}
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return attribute.Value{}
	}
	if val, ok := e.reflectScalar(rv); ok {
		return val
	}
	info := typeInfoOf(rv.Type())
	if info.marshaler && rv.CanInterface() {
		return e.marshaled(rv.Interface(), depth)
	}
	switch rv.Kind() {
	case reflect.String:
		return e.str(rv.String())
	case reflect.Bool:
		return attribute.BoolValue(rv.Bool())
	case reflect.Struct:
		start := len(e.kvs)
		for i := range info.fields {
			f := &info.fields[i]
			fv, err := rv.FieldByIndexErr(f.index)
			if err != nil || (f.omitEmpty && isEmptyValue(fv)) || (f.omitZero && fv.IsZero()) {
				continue
			}
			if e.red.SecretKey(f.name) {
				e.kvs = append(e.kvs, attribute.String(f.name, Redacted))
				continue
			}
			v := e.reflectValue(fv, depth+1)
			e.kvs = append(e.kvs, attribute.KeyValue{Key: attribute.Key(f.name), Value: v})
		}
		return e.popMap(start)
	case reflect.Map:
		if !info.mapKeyOK {
			return e.unsupported(rv)
		}
		if rv.IsNil() {
			return attribute.Value{}
		}
		keys := sortedMapKeys(rv)
		start := len(e.kvs)
		for _, k := range keys {
			if e.red.SecretKey(k.s) {
				e.kvs = append(e.kvs, attribute.String(k.s, Redacted))
				continue
			}
			v := e.reflectValue(rv.MapIndex(k.v), depth+1)
			e.kvs = append(e.kvs, attribute.KeyValue{Key: attribute.Key(k.s), Value: v})
		}
		return e.popMap(start)
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Uint8 {
			if rv.IsNil() {
				return attribute.Value{}
			}
			return e.str(base64.StdEncoding.EncodeToString(rv.Bytes())) // as encoding/json
		}
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return attribute.Value{}
		}
		n := rv.Len()
		if n > e.lim.MaxSliceLen {
			e.truncated++
			n = e.lim.MaxSliceLen
		}
		start := len(e.vals)
		for i := range n {
			v := e.reflectValue(rv.Index(i), depth+1)
			e.vals = append(e.vals, v)
		}
		return e.popSlice(start)
	}
	return e.unsupported(rv)
}

// unsupported is the fallback for values JSON cannot hold: channels,
// functions, complex numbers, unsafe pointers and maps with keys that are
// not strings, integers or TextMarshalers.
func (e *encoder) unsupported(rv reflect.Value) attribute.Value {
	e.truncated++
	return attribute.StringValue("[unsupported: " + rv.Type().String() + "]")
}

// marshaled encodes a json.Marshaler or encoding.TextMarshaler as
// encoding/json would, then converts the resulting JSON value.
func (e *encoder) marshaled(v any, depth int) attribute.Value {
	if m, ok := v.(json.Marshaler); ok {
		b, err := m.MarshalJSON()
		if err != nil {
			e.truncated++
			return attribute.StringValue("[unsupported: MarshalJSON failed]")
		}
		var out any
		dec := json.NewDecoder(bytesReader(b))
		dec.UseNumber()
		if err := dec.Decode(&out); err != nil {
			e.truncated++
			return attribute.StringValue("[unsupported: MarshalJSON returned invalid JSON]")
		}
		return e.value(out, depth)
	}
	if m, ok := v.(encoding.TextMarshaler); ok {
		b, err := m.MarshalText()
		if err != nil {
			e.truncated++
			return attribute.StringValue("[unsupported: MarshalText failed]")
		}
		return e.str(string(b))
	}
	return e.unsupported(reflect.ValueOf(v))
}

func uintValue(u uint64) attribute.Value {
	if u > math.MaxInt64 {
		// No int64 holds it; a float would lose digits. Keep it exact.
		return attribute.StringValue(strconv.FormatUint(u, 10))
	}
	return attribute.Int64Value(int64(u))
}

// floatValue keeps finite floats; NaN and ±Inf, which JSON cannot hold,
// become the strings "NaN", "+Inf" and "-Inf".
func floatValue(f float64) attribute.Value {
	switch {
	case math.IsNaN(f):
		return attribute.StringValue("NaN")
	case math.IsInf(f, 1):
		return attribute.StringValue("+Inf")
	case math.IsInf(f, -1):
		return attribute.StringValue("-Inf")
	}
	return attribute.Float64Value(f)
}
