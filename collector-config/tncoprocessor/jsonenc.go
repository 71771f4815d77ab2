package tncoprocessor

import (
	"encoding/base64"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// The message is the JSON the kafka exporter's raw encoding writes for a
// map body: encoding/json of the body's AsRaw value. The functions here
// write pdata values the same way, byte for byte, with the redaction
// processor's rules for a log body applied on the way.

const lowerHex = "0123456789abcdef"

var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// escaped and unescaped are the two-character escapes appendString
// writes (\" \\ \b \f \n \r \t), by the byte escaped and by the letter.
var escaped, unescaped = [utf8.RuneSelf]byte{'"': '"', '\\': '\\', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'},
	[256]byte{'"': '"', '\\': '\\', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// appendString appends s as encoding/json writes a string (HTML
// characters escaped, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if htmlSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			if e := escaped[c]; e != 0 {
				b = append(b, '\\', e)
			} else {
				b = append(b, '\\', 'u', '0', '0', lowerHex[c>>4], lowerHex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			if r == utf8.RuneError {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, '\\', 'u', '2', '0', '2', lowerHex[r&0xF])
			}
			start = i + size
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendFloat appends a finite f as encoding/json writes a float64 (and
// as pdata's AsString writes a double).
func appendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9, as encoding/json does
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// errNotJSON: a value encoding/json cannot write (NaN, ±Inf). The stock
// processors decide what becomes of such a record.
var errNotJSON = errors.New("value not representable in JSON")

// appendBody appends v as encoding/json writes v.AsRaw(), after the
// redaction processor's log-body rules: in a map, the value of a blocked
// key is masked whatever it is; every other scalar is tested through its
// text (AsString) against the blocked values and, if that text changes,
// written as the changed string.
func (r *check) appendBody(b []byte, v pcommon.Value) ([]byte, error) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return appendString(b, r.maskValues(v.Str())), nil
	case pcommon.ValueTypeInt:
		n := len(b)
		b = strconv.AppendInt(b, v.Int(), 10)
		return r.scalar(b, n), nil
	case pcommon.ValueTypeDouble:
		f := v.Double()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return b, errNotJSON
		}
		n := len(b)
		b = appendFloat(b, f)
		return r.scalar(b, n), nil
	case pcommon.ValueTypeBool:
		n := len(b)
		b = strconv.AppendBool(b, v.Bool())
		return r.scalar(b, n), nil
	case pcommon.ValueTypeBytes:
		text := base64.StdEncoding.EncodeToString(v.Bytes().AsRaw())
		return appendString(b, r.maskValues(text)), nil
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		b = append(b, '[')
		for i := range s.Len() {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = r.appendBody(b, s.At(i)); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case pcommon.ValueTypeMap:
		return r.appendBodyMap(b, v.Map())
	}
	// Empty: null, unless a blocked value matches the empty text.
	if p := r.maskValues(""); p != "" {
		return appendString(b, p), nil
	}
	return append(b, "null"...), nil
}

// scalar finishes a number or bool written at b[n:]: the blocked values
// apply to its text, as the processor applies them to AsString.
func (r *check) scalar(b []byte, n int) []byte {
	text := unsafe.String(&b[n], len(b)-n) // read before b changes
	if p := r.maskValues(text); p != text {
		return appendString(b[:n], p)
	}
	return b
}

// member is one key of a JSON object and its encoded value.
type member struct {
	key string
	val []byte
}

// appendBodyMap appends m as encoding/json writes m.AsRaw(): keys in byte
// order, the last of equal keys kept.
func (r *check) appendBodyMap(b []byte, m pcommon.Map) ([]byte, error) {
	var buf [16]member
	ms := buf[:0]
	for k, v := range m.All() {
		enc, err := r.appendValue(nil, k, v)
		if err != nil {
			return b, err
		}
		ms = append(ms, member{k, enc})
	}
	return appendMembers(b, ms), nil
}

// appendValue appends the value v of key: masked whole when the key is
// blocked, else as appendBody writes it.
func (r *check) appendValue(b []byte, key string, v pcommon.Value) ([]byte, error) {
	if r.keyBlocked(key) {
		return appendString(b, mask(v.Str())), nil
	}
	return r.appendBody(b, v)
}

// appendMembers appends {"k":v,...} in key order, the last of equal keys
// kept. It sorts ms.
func appendMembers(b []byte, ms []member) []byte {
	slices.SortStableFunc(ms, func(x, y member) int { return strings.Compare(x.key, y.key) })
	b = append(b, '{')
	first := true
	for i, m := range ms {
		if i+1 < len(ms) && ms[i+1].key == m.key {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, m.key)
		b = append(b, ':')
		b = append(b, m.val...)
	}
	return append(b, '}')
}
