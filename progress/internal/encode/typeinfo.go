package encode

import (
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// typeInfo is the per-type plan for encoding details: computed once per
// type, so the hot path does no tag parsing or method-set lookups.
type typeInfo struct {
	marshaler bool        // json.Marshaler or encoding.TextMarshaler
	mapKeyOK  bool        // a map whose keys encoding/json accepts
	fields    []fieldInfo // struct fields in encoding/json order
	plain     bool        // a struct, neither marshaler nor error: flattened by field
	isError   bool        // an error, not a marshaler: written as its Error text
	// For a map: its values' plan (nil unless they are structs) and the
	// slice type that holds a copy of its values.
	elem      *typeInfo
	elemSlice reflect.Type
}

type fieldInfo struct {
	name      string
	index     []int
	omitEmpty bool
	omitZero  bool
	kind      scalarKind // reflectScalar's decision, made once for the type
	plain     *typeInfo  // a plain struct's plan, flattened without boxing
	quoted    bool       // ",string" on a quotable type: its JSON text, as a string
}

type scalarKind uint8

const (
	scalarNone scalarKind = iota
	scalarString
	scalarBool
	scalarInt
	scalarUint
	scalarFloat
)

// scalarKindOf is reflectScalar's rule for a static type.
func scalarKindOf(t reflect.Type) scalarKind {
	switch t.Kind() {
	case reflect.String:
		if t == stringType {
			return scalarString
		}
	case reflect.Bool:
		if t == boolType {
			return scalarBool
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !isMarshaler(t) {
			return scalarInt
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if !isMarshaler(t) {
			return scalarUint
		}
	case reflect.Float32, reflect.Float64:
		if !isMarshaler(t) {
			return scalarFloat
		}
	}
	return scalarNone
}

func isMarshaler(t reflect.Type) bool {
	return t.Implements(jsonMarshalerType) || t.Implements(textMarshalerType)
}

var typeInfos sync.Map // reflect.Type -> *typeInfo

var (
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	errorType         = reflect.TypeFor[error]()
)

func typeInfoOf(t reflect.Type) *typeInfo {
	if v, ok := typeInfos.Load(t); ok {
		return v.(*typeInfo)
	}
	info := &typeInfo{marshaler: isMarshaler(t)}
	info.isError = !info.marshaler && t.Implements(errorType)
	switch t.Kind() {
	case reflect.Map:
		k := t.Key()
		switch k.Kind() {
		case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			info.mapKeyOK = true
		default:
			info.mapKeyOK = k.Implements(textMarshalerType)
		}
		info.elemSlice = reflect.SliceOf(t.Elem())
		if t.Elem().Kind() == reflect.Struct {
			// A struct cannot contain itself by value: this ends.
			info.elem = typeInfoOf(t.Elem())
		}
	case reflect.Struct:
		info.fields = structFields(t)
		info.plain = !info.marshaler && !t.Implements(errorType)
	}
	v, _ := typeInfos.LoadOrStore(t, info)
	return v.(*typeInfo)
}

// structFields lists the fields encoding/json would encode: exported ones,
// renamed by their json tag, "-" skipped, untagged embedded structs inlined
// (a field of the outer struct wins over an inlined one of the same name).
func structFields(t reflect.Type) []fieldInfo {
	var out []fieldInfo
	seen := map[string]bool{}
	var walk func(t reflect.Type, index []int, depth int)
	walk = func(t reflect.Type, index []int, depth int) {
		var embedded []reflect.StructField
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if sf.Anonymous && name == "" {
				ft := sf.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					sf.Type = ft
					embedded = append(embedded, sf)
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			if seen[name] {
				continue
			}
			seen[name] = true
			f := fieldInfo{
				name:      name,
				index:     append(slices.Clone(index), i),
				omitEmpty: hasOpt(opts, "omitempty"),
				omitZero:  hasOpt(opts, "omitzero"),
				kind:      scalarKindOf(sf.Type),
			}
			if hasOpt(opts, "string") {
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem() // as encoding/json: a pointer to a quotable type
				}
				f.quoted = scalarKindOf(ft) != scalarNone
			}
			if sf.Type.Kind() == reflect.Struct {
				// A struct cannot contain itself by value: this ends.
				if fi := typeInfoOf(sf.Type); fi.plain {
					f.plain = fi
				}
			}
			out = append(out, f)
		}
		if depth > 4 {
			return
		}
		for _, sf := range embedded { // sf.Type is the struct, not a pointer to it
			walk(sf.Type, append(slices.Clone(index), sf.Index...), depth+1)
		}
	}
	walk(t, nil, 0)
	return out
}

func hasOpt(opts, want string) bool { return slices.Contains(strings.Split(opts, ","), want) }

// isEmptyValue is encoding/json's omitempty rule.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// keyText is a map key as encoding/json writes it: string kinds as they
// are, then TextMarshalers, then integers. ok is false when its
// MarshalText failed or panicked.
func keyText(k reflect.Value) (string, bool) {
	switch {
	case k.Kind() == reflect.String:
		return k.String(), true
	case k.Type().Implements(textMarshalerType):
		return textKey(k)
	case k.CanInt():
		return strconv.FormatInt(k.Int(), 10), true
	case k.CanUint():
		return strconv.FormatUint(k.Uint(), 10), true
	}
	return "", false
}
