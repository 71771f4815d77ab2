package prettyexporter

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/internal/base/wireformat"
)

// This file holds the escaping appenders. Every string from a record (key,
// value, body, event name) reaches the output through one of them, so no
// control character, DEL, C1 control or invalid UTF-8 is ever written raw:
// the only escape sequences in the output are the SGR colour codes of
// colour.go.

// bare reports whether s can be written without quotes in the pretty
// format: not empty, and only printable non-space runes other than '"',
// '=' and '\\'. In a nested context (inside [..] or {..}) the structural
// characters ",[]{}" also force quotes, so that a list never reads
// ambiguously.
func bare(s string, nested bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c <= ' ' || c == '"' || c == '=' || c == '\\' || c == 0x7f {
				return false
			}
			if nested && (c == ',' || c == '[' || c == ']' || c == '{' || c == '}') {
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

// printable reports whether s has only printable runes (spaces allowed):
// such a message is written as it is.
func printable(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < ' ' || c == 0x7f {
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

// appendText appends s bare when it can be, else as a Go-quoted string
// (strconv escapes every non-printable rune: \x1b, \n, \u202e, \x9b).
func appendText(b []byte, s string, nested bool) []byte {
	if bare(s, nested) {
		return append(b, s...)
	}
	return strconv.AppendQuote(b, s)
}

// appendMessage appends a log body: as it is when printable, else quoted.
func appendMessage(b []byte, s string) []byte {
	if printable(s) {
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
		return appendList(b, v.AsSlice(), ", ", func(b []byte, e attribute.Value) []byte { return appendPrettyValue(b, e, true) })
	case attribute.STRINGSLICE:
		return appendList(b, v.AsStringSlice(), ", ", func(b []byte, e string) []byte { return appendText(b, e, true) })
	case attribute.INT64SLICE:
		return appendList(b, v.AsInt64Slice(), ", ", func(b []byte, e int64) []byte { return strconv.AppendInt(b, e, 10) })
	case attribute.FLOAT64SLICE:
		return appendList(b, v.AsFloat64Slice(), ", ", func(b []byte, e float64) []byte { return strconv.AppendFloat(b, e, 'g', -1, 64) })
	case attribute.BOOLSLICE:
		return appendList(b, v.AsBoolSlice(), ", ", func(b []byte, e bool) []byte { return strconv.AppendBool(b, e) })
	case attribute.MAP:
		b = append(b, '{')
		for i, kv := range v.AsMap() {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendText(b, string(kv.Key), true)
			b = append(b, ": "...)
			b = appendPrettyValue(b, kv.Value, true)
		}
		return append(b, '}')
	}
	return append(b, "<nil>"...)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Beyond what JSON requires it
// escapes DEL, the C1 controls and U+2028/U+2029, and replaces invalid
// UTF-8 with U+FFFD as encoding/json does, so a line is safe to print on a
// terminal and to embed in JavaScript.
func appendJSONString(b []byte, s string) []byte {
	return wireformat.AppendJSONString(b, s, wireformat.TerminalEscapes)
}

// appendJSONChars appends the escaped body of a JSON string.
func appendJSONChars(b []byte, s string) []byte {
	return wireformat.AppendJSONChars(b, s, wireformat.TerminalEscapes)
}

// appendList appends s as "[e0<sep>e1...]", each element written by each.
func appendList[T any](b []byte, s []T, sep string, each func([]byte, T) []byte) []byte {
	b = append(b, '[')
	for i, e := range s {
		if i > 0 {
			b = append(b, sep...)
		}
		b = each(b, e)
	}
	return append(b, ']')
}

// appendJSONValue appends v as a JSON value, terminal-safe.
func appendJSONValue(b []byte, v attribute.Value) []byte {
	return wireformat.AppendJSONValue(b, v, wireformat.TerminalEscapes)
}
