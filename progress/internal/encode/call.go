package encode

import (
	"encoding"
	"reflect"
)

// The methods a value brings (Error, MarshalJSON, MarshalText) are the
// caller's code: they may dereference a nil receiver or panic outright.
// Every call goes through these helpers, which recover, so that Record
// never panics; the encoder then writes the documented
// "[unsupported: <type>: <method> panicked]" fallback and counts it as a
// truncation. Nil receivers never get that far: the encoder writes them
// as null first, as encoding/json does.

func callError(x error) (s string, ok bool) {
	defer func() { _ = recover() }()
	return x.Error(), true
}

// callMarshal calls a MarshalJSON or MarshalText method.
func callMarshal(method func() ([]byte, error)) (b []byte, ok bool, err error) {
	defer func() { _ = recover() }()
	b, err = method()
	return b, true, err
}

// isNil reports whether rv holds a nil pointer, map, slice, function,
// channel or interface: a typed nil, whose methods must not be called.
func isNil(rv reflect.Value) bool {
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
}

// textKey is a map key's text through its MarshalText, as encoding/json
// writes it: "" for a nil pointer key. ok is false when the method failed
// or panicked.
func textKey(k reflect.Value) (s string, ok bool) {
	if isNil(k) {
		return "", true
	}
	if !k.CanInterface() {
		return "", false
	}
	tm, is := k.Interface().(encoding.TextMarshaler)
	if !is {
		return "", false
	}
	b, ok, err := callMarshal(tm.MarshalText)
	if !ok || err != nil {
		return "", false
	}
	return string(b), true
}
