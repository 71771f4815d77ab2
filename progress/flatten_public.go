package progress

import "go.opentelemetry.io/otel/attribute"

// Flatten returns the detail attributes Record would write for details,
// using DefaultRedactor and DefaultLimits, and reports whether anything was
// cut.
//
// The encoding, which Decode undoes:
//   - A map[string]any, map with string or integer keys, or struct (json
//     tags as encoding/json: renames, "-", omitempty, omitzero, inlined
//     embedded structs) is flattened: each entry becomes an attribute
//     DetailsPrefix + path, the path's segments joined with
//     DetailsSeparator. In a segment, '%' is written "%25" and '.' "%2E", so
//     a key containing the separator never collides with a nested path.
//     Map keys are written in sorted order.
//   - An empty map or struct becomes an empty MAP value.
//   - A slice or array stays one SLICE value; maps inside it are MAP values.
//     []byte becomes a base64 string, as in encoding/json.
//   - Strings, bools, integers and floats map to their attribute types.
//     Unsigned integers above MaxInt64 become decimal strings; NaN, +Inf and
//     -Inf become the strings "NaN", "+Inf" and "-Inf".
//   - json.Marshaler and encoding.TextMarshaler values are encoded through
//     their methods; time.Time becomes an RFC 3339 string, time.Duration
//     nanoseconds, error its Error() text.
//   - nil and nil pointers become empty values (decoded as nil).
//   - Channels, functions, complex numbers and maps with other key types
//     become the string "[unsupported: <type>]". Cycles stop at
//     Limits.MaxDepth with TruncatedDepth. Both count as truncation.
//   - Any other top-level value (a string, a slice) is kept under "value".
//   - A key naming a secret, or a string shaped like a PEM private key,
//     becomes Redacted.
func Flatten(details any) (attrs []attribute.KeyValue, truncated bool) {
	kc := &keyCache{red: DefaultRedactor()}
	e := getEncoder(kc, kc.red, DefaultLimits())
	e.details(details)
	attrs = append([]attribute.KeyValue(nil), e.attrs...)
	truncated = e.truncated > 0
	putEncoder(e)
	return attrs, truncated
}
