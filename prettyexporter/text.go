package prettyexporter

import (
	"encoding/base64"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/tncomessage"
)

// The escaping appenders. Every string from a record (key, value, body, event name) reaches the
// output through one of them, so no control character, DEL, C1 control or invalid UTF-8 is ever
// written raw: the only escape sequences in the output are the SGR colour codes of color.go.

// bare reports whether s can be written without quotes in the pretty format: not empty, and only
// printable non-space runes other than '"', '=' and '\\'. In a nested context (inside [..] or {..})
// the structural characters ",[]{}" also force quotes, so that a list never reads ambiguously.
func bare(s string, nested bool) bool { return s != "" && printable(s, true, nested) }

// printable reports whether s has only printable runes (spaces allowed: such a message is written
// as it is), and with bare none of the ASCII ones bare and nested rule out.
func printable(s string, bare, nested bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < ' ' || c == 0x7f || bare && (c == ' ' || c == '"' || c == '=' || c == '\\') {
				return false
			}
			if nested && strings.IndexByte(",[]{}", c) >= 0 {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || !strconv.IsPrint(r) {
			return false
		}
		i += size
	}
	return true
}

// appendText appends s bare when it can be, else as a Go-quoted string (strconv escapes every
// non-printable rune: \x1b, \n, \u202e, \x9b).
func appendText(b []byte, s string, nested bool) []byte {
	if bare(s, nested) {
		return append(b, s...)
	}
	return strconv.AppendQuote(b, s)
}

// appendPrettyValue appends v for the pretty format.
func appendPrettyValue(b []byte, v attribute.Value, nested bool) []byte {
	switch v.Type() {
	case attribute.STRING:
		return appendText(b, v.AsString(), nested)
	case attribute.BOOL:
		return strconv.AppendBool(b, v.AsBool())
	case attribute.INT64:
		return strconv.AppendInt(b, v.AsInt64(), 10)
	case attribute.FLOAT64:
		return strconv.AppendFloat(b, v.AsFloat64(), 'g', -1, 64)
	case attribute.BYTESLICE:
		return base64.StdEncoding.AppendEncode(b, v.AsByteSlice())
	case attribute.SLICE:
		return appendList(b, "[]", ", ", v.AsSlice(), func(b []byte, e attribute.Value) []byte { return appendPrettyValue(b, e, true) })
	case attribute.STRINGSLICE:
		return appendList(b, "[]", ", ", v.AsStringSlice(), func(b []byte, e string) []byte { return appendText(b, e, true) })
	case attribute.INT64SLICE:
		return appendList(b, "[]", ", ", v.AsInt64Slice(), func(b []byte, e int64) []byte { return strconv.AppendInt(b, e, 10) })
	case attribute.FLOAT64SLICE:
		return appendList(b, "[]", ", ", v.AsFloat64Slice(), func(b []byte, e float64) []byte { return strconv.AppendFloat(b, e, 'g', -1, 64) })
	case attribute.BOOLSLICE:
		return appendList(b, "[]", ", ", v.AsBoolSlice(), strconv.AppendBool)
	case attribute.MAP:
		return appendList(b, "{}", ", ", v.AsMap(), func(b []byte, kv attribute.KeyValue) []byte {
			return appendPrettyValue(append(appendText(b, string(kv.Key), true), ": "...), kv.Value, true)
		})
	}
	return append(b, "<nil>"...)
}

// appendList appends s between the two brackets, its elements written by each and separated by
// sep.
func appendList[T any](b []byte, brackets, sep string, s []T, each func([]byte, T) []byte) []byte {
	b = append(b, brackets[0])
	for i, e := range s {
		if i > 0 {
			b = append(b, sep...)
		}
		b = each(b, e)
	}
	return append(b, brackets[1])
}

// appendJSONString appends s as a JSON string. Beyond what JSON requires it escapes DEL, the C1
// controls and U+2028/U+2029, and replaces invalid UTF-8 with U+FFFD as encoding/json does, so a
// line is safe to print on a terminal and to embed in JavaScript.
func appendJSONString(b []byte, s string) []byte {
	return tncomessage.AppendJSONString(b, s, tncomessage.TerminalEscapes)
}
