package encode

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/progress/internal/redact"
	"github.com/progressotel/progressotel/tncomessage"
)

// This file walks a value: the checks live in admit, admitElem, enter,
// str, fit and enterMap, once; the walkers only decide what a Go value looks
// like on the wire.

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

// panicMarker replaces the details when the encoder itself panicked: a bug
// of this package, never of the caller's values (their methods are called
// through the recovering helpers of call.go). Tests look for it.
const panicMarker = tncomessage.UnsupportedPrefix + "details: encoder panicked]"

// Details flattens an event's details below DetailsRoot (see progress/wire
// for the encoding). It never panics: should the walk itself panic, the
// details written so far are replaced by one marker, counted as a cut.
func (e *Encoder) Details(v any) {
	start := len(e.Attrs)
	defer func() {
		if recover() == nil {
			return
		}
		clear(e.Attrs[start:])
		e.Attrs = e.Attrs[:start]
		// The scratch stacks may hold anything: drop them.
		e.sortBuf, e.pairs, e.rkeys, e.vals, e.kvs = nil, nil, nil, nil, nil
		e.truncated++
		e.full = true
		e.Attrs = append(e.Attrs, attribute.String(string(e.keys.value.key), panicMarker))
	}()
	e.details(v)
}

func (e *Encoder) rootSlot() slot { return slot{node: &e.keys.root} }

// details flattens a map or struct at the root; any other value is kept
// whole under ValueKey.
func (e *Encoder) details(v any) {
	root := e.rootSlot()
	switch d := v.(type) {
	case nil:
		return
	case map[string]any:
		if len(d) > 0 {
			e.mapAny(root, d)
		}
		return
	case map[string]string:
		if len(d) > 0 {
			e.mapString(root, d)
		}
		return
	case error:
		// An error is its message, at the root too (where a pointer to a
		// struct would otherwise be flattened); a typed nil is no details.
		if isNil(reflect.ValueOf(d)) {
			return
		}
		if s, ok := e.admit(root, tncomessage.ValueKey); ok {
			s.mode = wholeMode
			e.value(s, d)
		}
		return
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return
		}
		if rv.Kind() == reflect.Pointer && typeInfoOf(rv.Type()).marshaler {
			break
		}
		rv = rv.Elem()
	}
	info := typeInfoOf(rv.Type())
	switch {
	case rv.Kind() == reflect.Struct && info.plain:
		e.structValue(root, rv, info)
	case rv.Kind() == reflect.Map && info.mapKeyOK && !info.marshaler:
		if rv.Len() > 0 {
			e.reflectMap(root, rv, info)
		}
	default:
		if s, ok := e.admit(root, tncomessage.ValueKey); ok {
			s.mode = wholeMode
			e.reflectValue(s, rv)
		}
	}
}

// value writes v in s, without reflection for the common types (the other
// integer and float types take reflectScalar, which writes the same).
func (e *Encoder) value(s slot, v any) {
	switch x := v.(type) {
	case string:
		e.put(s, e.str(x, s.elem()))
	case bool:
		e.put(s, attribute.BoolValue(x))
	case int:
		e.put(s, attribute.Int64Value(int64(x)))
	case int64:
		e.put(s, attribute.Int64Value(x))
	case float64:
		e.put(s, e.float(x, 64))
	case nil:
		e.put(s, attribute.Value{})
	case map[string]any:
		if !e.nilOrEmpty(s, x == nil, len(x)) {
			e.mapAny(s, x)
		}
	case map[string]string:
		if !e.nilOrEmpty(s, x == nil, len(x)) {
			e.mapString(s, x)
		}
	case []any:
		e.slice(s, x == nil, len(x), func(c slot, i int) { e.value(c, x[i]) })
	case []string:
		e.slice(s, x == nil, len(x), func(c slot, i int) { e.put(c, e.str(x[i], true)) })
	case json.Number:
		if i, err := x.Int64(); err == nil {
			e.put(s, attribute.Int64Value(i))
		} else if f, err := x.Float64(); err == nil {
			e.put(s, e.float(f, 64))
		} else {
			e.put(s, e.str(x.String(), s.elem()))
		}
	case time.Time:
		e.put(s, e.fit(x.Format(time.RFC3339Nano)))
	case time.Duration:
		e.put(s, attribute.Int64Value(int64(x)))
	case error:
		rv := reflect.ValueOf(x)
		if isNil(rv) {
			e.put(s, attribute.Value{})
		} else if typeInfoOf(rv.Type()).marshaler {
			e.marshaled(s, rv)
		} else {
			e.errorText(s, x, rv.Type())
		}
	default:
		e.reflectValue(s, reflect.ValueOf(v))
	}
}

// nilOrEmpty writes a nil map as null and an empty one as {}, as
// encoding/json does, and reports whether it wrote one.
func (e *Encoder) nilOrEmpty(s slot, isNil bool, n int) bool {
	switch {
	case isNil:
		e.put(s, attribute.Value{})
	case n == 0:
		e.emptyMap(s)
	default:
		return false
	}
	return true
}

// emptyMap writes an empty MAP in s. The root writes nothing for empty
// details.
func (e *Encoder) emptyMap(s slot) {
	if s.node == &e.keys.root {
		return
	}
	e.size += valueCost
	e.put(s, attribute.MapValue())
}

// begin starts a container put in s: it is either flattened into
// attributes below s.node (flat) or built as one MAP or SLICE value, which
// is charged here.
func (e *Encoder) begin(s slot) (nested bool, kvStart, attrStart int) {
	if s.flat() {
		return false, 0, len(e.Attrs)
	}
	e.size += valueCost
	return true, len(e.kvs), 0
}

// end finishes what enter and begin started: a nested map is put in s; a flattened
// one that wrote nothing (every field omitted, every key dropped) is an
// empty map, as encoding/json would write it.
func (e *Encoder) end(s slot, nested bool, kvStart, attrStart int) {
	e.leave()
	if nested {
		e.put(s, e.popMap(kvStart))
		return
	}
	if len(e.Attrs) == attrStart && !e.full {
		e.emptyMap(s)
	}
}

// enterMap is enter for a map of n entries, and charges their visit
// before they are read. A map too wide for the work left is written as one
// marker instead; whether it fits depends only on its size, so the result
// stays deterministic.
func (e *Encoder) enterMap(s slot, n int) bool {
	if !e.enter(s) {
		return false
	}
	if e.work+n*valueCost <= e.workLimit {
		e.work += n * valueCost
		return true
	}
	e.wideMap(s, n)
	e.leave()
	return false
}

// wideMap writes the marker of a map of n entries too wide to visit in s.
func (e *Encoder) wideMap(s slot, n int) {
	e.truncated++
	if s.node == &e.keys.root {
		var ok bool
		if s, ok = e.admit(s, tncomessage.ValueKey); !ok {
			return
		}
	}
	e.put(s, e.fit("[truncated: map of "+strconv.Itoa(n)+" entries]"))
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

// mapAny writes a non-empty map[string]any in s in sorted key order, so
// that what a limit cuts never depends on map iteration order. Entries a
// budget will cut are not sorted, and keys longer than MaxStringLen are
// dropped first.
func (e *Encoder) mapAny(s slot, m map[string]any) {
	if !e.enterMap(s, len(m)) {
		return
	}
	start := len(e.pairs)
	if cap(e.pairs)-len(e.pairs) < len(m) {
		e.pairs = slices.Grow(e.pairs, len(m)) // one allocation, not log n
	}
	keyBytes := 0
	for k, v := range m {
		if len(k) > e.lim.MaxStringLen {
			e.truncated++
			continue
		}
		e.pairs = append(e.pairs, mapEntry{k: k, v: v})
		keyBytes += len(k)
	}
	if !e.keysFit(s, len(m), keyBytes) {
		clear(e.pairs[start:])
		e.pairs = e.pairs[:start]
		return
	}
	nested, kvStart, attrStart := e.begin(s)
	{
		n := len(e.pairs) - start
		p := e.pairs[start:]
		if n <= 12 {
			sortEntries(p)
		} else {
			p = sortFirst(p, e.writable(s), cmpEntries)
		}
		// e.value may grow e.pairs: index it afresh on every step.
		for i := start; i < start+len(p); i++ {
			c, ok := e.admit(s, e.pairs[i].k)
			if !ok {
				if e.full {
					break
				}
				continue
			}
			e.value(c, e.pairs[i].v)
		}
		if len(p) < n {
			e.stop() // the budget left no room for the rest
		}
	}
	clear(e.pairs[start:])
	e.pairs = e.pairs[:start]
	e.end(s, nested, kvStart, attrStart)
}

// keysFit charges the key bytes of a map about to be sorted; a map whose
// keys do not fit is too wide as well, and the details go on after it
// (the level enterMap started is left).
func (e *Encoder) keysFit(s slot, n, keyBytes int) bool {
	if e.work+keyBytes <= e.workLimit {
		e.work += keyBytes
		return true
	}
	e.wideMap(s, n)
	e.leave()
	return false
}

// sortedMap writes a map of n entries put in s, whose entries with keys
// of keyBytes bytes in all the caller appended to *buf from start, in key
// order until a budget runs out; only the entries the budget leaves room
// for are sorted. It pops the entries and ends what enterMap started.
func sortedMap[T any](e *Encoder, s slot, n, keyBytes int, buf *[]T, start int,
	cmp func(a, b T) int, key func(*T) string, write func(slot, *T)) {
	if e.keysFit(s, n, keyBytes) {
		nested, kvStart, attrStart := e.begin(s)
		all := (*buf)[start:]
		keys := sortFirst(all, e.writable(s), cmp)
		for i := range keys {
			c, ok := e.admit(s, key(&keys[i]))
			if !ok {
				if e.full {
					break
				}
				continue
			}
			write(c, &keys[i])
		}
		if len(keys) < len(all) {
			e.stop() // the budget left no room for the rest
		}
		e.end(s, nested, kvStart, attrStart)
	}
	clear((*buf)[start:])
	*buf = (*buf)[:start]
}

// mapString is mapAny for map[string]string.
func (e *Encoder) mapString(s slot, m map[string]string) {
	if !e.enterMap(s, len(m)) {
		return
	}
	start := len(e.sortBuf)
	e.sortBuf = slices.Grow(e.sortBuf, len(m))
	keyBytes := 0
	for k := range m {
		if len(k) > e.lim.MaxStringLen {
			e.truncated++
			continue
		}
		e.sortBuf = append(e.sortBuf, k)
		keyBytes += len(k)
	}
	sortedMap(e, s, len(m), keyBytes, &e.sortBuf, start, strings.Compare, func(k *string) string { return *k },
		func(c slot, k *string) { e.put(c, e.str(m[*k], false)) })
}

// structValue writes a struct by its plan: scalar fields are read
// directly and plain struct fields recursed into, with no per-field type
// lookups.
func (e *Encoder) structValue(s slot, rv reflect.Value, info *typeInfo) {
	if len(info.fields) == 0 {
		e.emptyMap(s)
		return
	}
	if !e.enter(s) {
		return
	}
	nested, kvStart, attrStart := e.begin(s)
	for i := range info.fields {
		if !e.spend(valueCost) {
			break
		}
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
		c, ok := e.admit(s, f.name)
		if !ok {
			if e.full {
				break
			}
			continue
		}
		if f.quoted {
			e.quoted(c, fv)
			continue
		}
		switch f.kind {
		case scalarString:
			e.put(c, e.str(fv.String(), false))
			continue
		case scalarBool:
			e.put(c, attribute.BoolValue(fv.Bool()))
			continue
		case scalarInt:
			e.put(c, attribute.Int64Value(fv.Int()))
			continue
		case scalarUint:
			e.put(c, e.uint(fv.Uint()))
			continue
		case scalarFloat:
			e.put(c, e.float(fv.Float(), fv.Type().Bits()))
			continue
		}
		switch {
		case f.plain != nil:
			e.structValue(c, fv, f.plain)
		case fv.CanInterface():
			e.value(c, fv.Interface())
		default:
			e.reflectValue(c, fv) // promoted through an unexported embedded struct
		}
	}
	e.end(s, nested, kvStart, attrStart)
}

func cmpReflectKeys(a, b reflectKey) int { return strings.Compare(a.s, b.s) }

// reflectMap writes a non-empty map whose keys encoding/json accepts. It
// copies the entries into one slice with SetIterKey/SetIterValue, so it
// allocates twice per map instead of twice per entry as MapIndex would.
func (e *Encoder) reflectMap(s slot, rv reflect.Value, info *typeInfo) {
	n := rv.Len()
	if !e.enterMap(s, n) {
		return
	}
	key := reflect.New(rv.Type().Key()).Elem()
	vals := reflect.MakeSlice(info.elemSlice, n, n)
	start := len(e.rkeys)
	e.rkeys = slices.Grow(e.rkeys, n)
	keyBytes := 0
	var it reflect.MapIter
	it.Reset(rv)
	for i := 0; it.Next() && i < n; i++ {
		key.SetIterKey(&it)
		k, ok := keyText(key)
		if !ok || len(k) > e.lim.MaxStringLen {
			e.truncated++
			continue
		}
		vals.Index(i).SetIterValue(&it)
		e.rkeys = append(e.rkeys, reflectKey{s: k, i: i})
		keyBytes += len(k)
	}
	sortedMap(e, s, n, keyBytes, &e.rkeys, start, cmpReflectKeys, func(k *reflectKey) string { return k.s },
		func(c slot, k *reflectKey) { e.mapElem(c, vals.Index(k.i), info) })
}

// mapElem writes a reflected map value.
func (e *Encoder) mapElem(c slot, mv reflect.Value, info *typeInfo) {
	if val, ok := e.reflectScalar(c, mv); ok {
		e.put(c, val)
		return
	}
	switch {
	case info.elem != nil && info.elem.plain:
		e.structValue(c, mv, info.elem)
	case mv.CanInterface():
		e.value(c, mv.Interface())
	default:
		e.reflectValue(c, mv)
	}
}

// slice writes the first MaxSliceLen of n elements as one SLICE value in
// s, each through elem; a nil slice is null.
func (e *Encoder) slice(s slot, isNil bool, n int, elem func(c slot, i int)) {
	if isNil {
		e.put(s, attribute.Value{})
		return
	}
	if !e.enter(s) {
		return
	}
	e.size += valueCost
	if n > e.lim.MaxSliceLen {
		e.truncated++
		n = e.lim.MaxSliceLen
	}
	start := len(e.vals)
	saved := e.inKey
	e.inKey = false
	for i := range n {
		c, ok := e.admitElem()
		if !ok {
			break
		}
		elem(c, i)
	}
	e.inKey = saved
	e.leave()
	e.put(s, e.popSlice(start))
}

// bytesValue writes a []byte as a base64 string, as encoding/json does.
// The bytes are cut first, so that at most MaxStringLen base64 characters
// are built, and searched for private keys before they are encoded.
func (e *Encoder) bytesValue(s slot, b []byte) {
	cut := false
	if max := e.lim.MaxStringLen / 4 * 3; len(b) > max {
		e.truncated++
		b, cut = b[:max], true
	}
	if !e.spend(len(b)) {
		e.put(s, e.fit(tncomessage.TruncatedSuffix))
		return
	}
	if e.red.SecretBytes(b) {
		e.put(s, e.fit(tncomessage.Redacted))
		return
	}
	enc := base64.StdEncoding.EncodeToString(b)
	if cut {
		enc += tncomessage.TruncatedSuffix
	}
	e.put(s, e.fit(enc))
}

// reflectScalar converts the scalar kinds whose encoding does not depend
// on methods (a type with MarshalJSON or MarshalText is not a scalar).
func (e *Encoder) reflectScalar(s slot, rv reflect.Value) (attribute.Value, bool) {
	switch rv.Kind() {
	case reflect.String:
		if rv.Type() == stringType {
			return e.str(rv.String(), s.elem()), true
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
			return e.uint(rv.Uint()), true
		}
	case reflect.Float32, reflect.Float64:
		if !typeInfoOf(rv.Type()).marshaler {
			return e.float(rv.Float(), rv.Type().Bits()), true
		}
	}
	return attribute.Value{}, false
}

var (
	stringType = reflect.TypeFor[string]()
	boolType   = reflect.TypeFor[bool]()
)

// reflectValue writes any value the way encoding/json would shape it;
// see progress/wire for the fallbacks.
func (e *Encoder) reflectValue(s slot, rv reflect.Value) {
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			e.put(s, attribute.Value{})
			return
		}
		if rv.Kind() == reflect.Pointer {
			if info := typeInfoOf(rv.Type()); info.marshaler || info.isError {
				break // a method with a pointer receiver: *os.PathError is its message
			}
		}
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		e.put(s, attribute.Value{})
		return
	}
	if val, ok := e.reflectScalar(s, rv); ok {
		e.put(s, val)
		return
	}
	info := typeInfoOf(rv.Type())
	if info.marshaler {
		e.marshaled(s, rv)
		return
	}
	if info.isError && rv.CanInterface() {
		if err, ok := rv.Interface().(error); ok {
			e.errorText(s, err, rv.Type())
			return
		}
	}
	switch rv.Kind() {
	case reflect.String:
		e.put(s, e.str(rv.String(), s.elem()))
	case reflect.Bool:
		e.put(s, attribute.BoolValue(rv.Bool()))
	case reflect.Struct:
		e.structValue(s, rv, info)
	case reflect.Map:
		switch {
		case !info.mapKeyOK:
			e.unsupported(s, rv.Type(), "")
		case !e.nilOrEmpty(s, rv.IsNil(), rv.Len()):
			e.reflectMap(s, rv, info)
		}
	case reflect.Slice, reflect.Array: // a [N]byte is an array of numbers, as in encoding/json
		switch {
		case rv.Kind() == reflect.Slice && rv.IsNil():
			e.put(s, attribute.Value{})
		case rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Uint8:
			e.bytesValue(s, rv.Bytes())
		default:
			e.slice(s, false, rv.Len(), func(c slot, i int) { e.reflectValue(c, rv.Index(i)) })
		}
	default:
		e.unsupported(s, rv.Type(), "")
	}
}

// unsupported writes the fallback for a value JSON cannot hold or a method
// that failed, counted as a cut.
func (e *Encoder) unsupported(s slot, t reflect.Type, what string) {
	e.truncated++
	e.put(s, e.fit(tncomessage.UnsupportedPrefix+t.String()+what+"]"))
}

// errorText writes an error's Error text.
func (e *Encoder) errorText(s slot, err error, t reflect.Type) {
	text, ok := callError(err)
	if !ok {
		e.unsupported(s, t, ": Error panicked")
		return
	}
	e.put(s, e.str(text, s.elem()))
}

// marshaled writes a json.Marshaler or encoding.TextMarshaler as
// encoding/json would: a typed nil is null, and the method's JSON output
// becomes one value (a MAP, not flattened attributes).
func (e *Encoder) marshaled(s slot, rv reflect.Value) {
	if isNil(rv) {
		e.put(s, attribute.Value{})
		return
	}
	if !rv.CanInterface() {
		e.unsupported(s, rv.Type(), ": unexported")
		return
	}
	v := rv.Interface()
	if m, ok := v.(json.Marshaler); ok {
		b, ok, err := callMarshal(m.MarshalJSON)
		switch {
		case !ok:
			e.unsupported(s, rv.Type(), ": MarshalJSON panicked")
			return
		case err != nil:
			e.unsupported(s, rv.Type(), ": MarshalJSON failed")
			return
		case !e.spend(len(b)):
			e.put(s, e.fit(tncomessage.TruncatedSuffix))
			return
		}
		var out any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&out); err != nil {
			e.unsupported(s, rv.Type(), ": MarshalJSON returned invalid JSON")
			return
		}
		if s.node != nil {
			s.mode = wholeMode
		}
		e.value(s, out)
		return
	}
	if m, ok := v.(encoding.TextMarshaler); ok {
		b, ok, err := callMarshal(m.MarshalText)
		switch {
		case !ok:
			e.unsupported(s, rv.Type(), ": MarshalText panicked")
		case err != nil:
			e.unsupported(s, rv.Type(), ": MarshalText failed")
		default:
			e.put(s, e.str(string(b[:min(len(b), e.lim.MaxStringLen+redact.CutMargin+1)]), s.elem()))
		}
		return
	}
	e.unsupported(s, rv.Type(), "")
}

// quoted writes a ",string" field: the JSON text of the value, as a
// string, as encoding/json does.
func (e *Encoder) quoted(s slot, fv reflect.Value) {
	for fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			e.put(s, attribute.Value{})
			return
		}
		fv = fv.Elem()
	}
	var text string
	switch fv.Kind() {
	case reflect.String:
		b, _ := json.Marshal(fv.String())
		text = string(b)
	case reflect.Bool:
		text = strconv.FormatBool(fv.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		text = strconv.FormatInt(fv.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		text = strconv.FormatUint(fv.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		f, bits := fv.Float(), fv.Type().Bits()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			e.put(s, e.float(f, bits))
			return
		}
		text = string(tncomessage.AppendJSONFloat(nil, f, bits))
	default:
		e.reflectValue(s, fv)
		return
	}
	e.put(s, e.str(text, s.elem()))
}

// uint keeps an unsigned integer exact: one above MaxInt64, which no
// int64 holds and a float would round, becomes its decimal string.
func (e *Encoder) uint(u uint64) attribute.Value {
	if u > math.MaxInt64 {
		return e.fit(strconv.FormatUint(u, 10))
	}
	return attribute.Int64Value(int64(u))
}

// float keeps finite floats. NaN and ±Inf, which JSON cannot hold, become
// the strings "NaN", "+Inf" and "-Inf" and count as a cut, as every other
// value JSON cannot hold does.
func (e *Encoder) float(f float64, bits int) attribute.Value {
	switch {
	case math.IsNaN(f):
		e.truncated++
		return e.fit("NaN")
	case math.IsInf(f, 1):
		e.truncated++
		return e.fit("+Inf")
	case math.IsInf(f, -1):
		e.truncated++
		return e.fit("-Inf")
	}
	if bits == 32 {
		// The shortest decimal of the float32, as encoding/json prints
		// float32s: float32(0.1) stays 0.1 rather than 0.10000000149011612.
		var buf [32]byte
		b := strconv.AppendFloat(buf[:0], f, 'g', -1, 32)
		f, _ = strconv.ParseFloat(unsafe.String(&b[0], len(b)), 64)
	}
	return attribute.Float64Value(f)
}

func cutUTF8(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
