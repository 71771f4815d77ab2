// Package wire is the record format of package progress, for the programs
// that read it: the attribute names a pipeline relies on, Decode (a record
// back into the Ignition event it came from), AppendMessage (the TNCO
// message of a record, as the collector writes it). A driver calls
// progress instead; a test that builds a record by hand flattens its
// details with progresstest.Flatten.
//
// # The record
//
// A progress event is one OpenTelemetry log record: EventName is the
// progressEventType, AttrEventType is EventType, and each detail is one
// attribute below DetailsPrefix. A condition transition has EventName and
// Body set to its stream, AttrEventType TransitionEventType, and its
// payload under progress.<stream>.{status,reason,message} and
// progress.<stream>.previous.{status,reason,message}. Both carry the
// envelope (AttrComponentName ... AttrTenant), AttrSequence, and
// AttrTruncated=true when limits cut something. docs/wire.md has the table.
//
// # Details
//
// The encoding, which Decode undoes:
//   - A map[string]any, a map with string, integer or TextMarshaler keys,
//     or a struct (json tags as encoding/json: renames, "-", omitempty,
//     omitzero, ",string", inlined embedded structs) is flattened: each
//     entry becomes an attribute DetailsPrefix + path, segments joined
//     with DetailsSeparator, '%' written "%25" and '.' "%2E" in a segment.
//     Keys are written in sorted order (struct fields in declaration
//     order).
//   - An empty map or struct becomes an empty MAP value; a nil map, slice
//     or pointer and nil become an empty value (null), at any depth.
//   - A slice or array stays one SLICE value, maps and structs inside it
//     MAP values; []byte becomes a base64 string.
//   - Strings, bools, integers and floats map to their attribute types;
//     unsigned integers above MaxInt64 become decimal strings.
//   - json.Marshaler and encoding.TextMarshaler values are encoded through
//     their methods (a MarshalJSON result is one value, not flattened);
//     time.Time becomes an RFC 3339 string, time.Duration nanoseconds, an
//     error its Error() text. A typed nil is null: its methods are never
//     called.
//   - Any other top-level value (a string, a slice) is kept under ValueKey.
//
// # Fallbacks, each counted as a cut (AttrTruncated)
//
//   - NaN, +Inf and -Inf become the strings "NaN", "+Inf" and "-Inf";
//     channels, functions, complex numbers and maps with other key types
//     become "[unsupported: <type>]"; a method that fails or panics,
//     "[unsupported: <type>: MarshalJSON failed]" (or "panicked", and
//     likewise for MarshalText and Error).
//   - Past progress.Limits: a string is cut and ends in TruncatedSuffix, a
//     value nested too deep (or a cycle) becomes TruncatedDepth, a slice
//     keeps its first elements, and past MaxAttributes or MaxDetailsBytes
//     the rest of the details is cut. A map too wide to visit within the
//     work bound becomes "[truncated: map of N entries]", and the details
//     go on after it.
//
// Redaction (progress.Redactor) writes Redacted for secret keys, for
// values holding private-key material, and in place of each secret that
// free text shows by its shape; it is not counted as a cut.
package wire
