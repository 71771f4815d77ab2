package tncomessage

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// JSONEscapes is a way of writing JSON: which ASCII bytes are written as
// they are, which have a two-character escape, whether every rune
// strconv.IsPrint rejects is escaped too, and whether a MAP is written as
// encoding/json writes a map[string]any. Every way replaces invalid UTF-8
// with \ufffd and escapes U+2028 and U+2029, as encoding/json does.
type JSONEscapes struct {
	plain     [utf8.RuneSelf]bool // written as they are
	short     [utf8.RuneSelf]byte // the letter of a two-character escape (\n), or 0
	printable bool                // escape every non-printable rune
	goMaps    bool                // MAP keys in byte order, the last of equal keys kept
}

func newJSONEscapes(plain func(c byte) bool, shortEscapes string, printable, goMaps bool) *JSONEscapes {
	e := &JSONEscapes{printable: printable, goMaps: goMaps}
	for c := byte(0); c < utf8.RuneSelf; c++ {
		e.plain[c] = c >= ' ' && c != '"' && c != '\\' && plain(c)
	}
	e.short['"'], e.short['\\'] = '"', '\\'
	letters := map[byte]byte{'\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}
	for i := 0; i < len(shortEscapes); i++ {
		e.short[shortEscapes[i]] = letters[shortEscapes[i]]
	}
	return e
}

var (
	// StdEscapes writes byte for byte as encoding/json does: <, > and &
	// escaped as \u00XX (its HTML escaping), \b \f \n \r \t short, maps
	// as a map[string]any.
	StdEscapes = newJSONEscapes(func(c byte) bool { return c != '<' && c != '>' && c != '&' }, "\b\f\n\r\t", false, true)
	// TerminalEscapes writes strings that are also safe to print on a
	// terminal: DEL and every non-printable rune (strconv.IsPrint: the C1
	// controls, bidi overrides, zero-width runes) escaped as well, no HTML
	// escaping, \n \r \t short, map entries in their order.
	TerminalEscapes = newJSONEscapes(func(c byte) bool { return c != 0x7f }, "\n\r\t", true, false)
)

// AppendJSONString appends s as a JSON string, escaped the way e says.
func AppendJSONString(b []byte, s string, e *JSONEscapes) []byte {
	b = append(b, '"')
	b = AppendJSONChars(b, s, e)
	return append(b, '"')
}

// AppendJSONChars appends the escaped characters of s, without the quotes.
func AppendJSONChars(b []byte, s string, e *JSONEscapes) []byte {
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if e.plain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			if l := e.short[c]; l != 0 {
				b = append(b, '\\', l)
			} else {
				b = append(b, '\\', 'u', '0', '0', lowerHex[c>>4], lowerHex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028', r == '\u2029', e.printable && !strconv.IsPrint(r):
			b = append(b, s[start:i]...)
			if r > 0xFFFF { // JSON's \u escapes are UTF-16: a surrogate pair
				r1, r2 := utf16.EncodeRune(r)
				b = appendU4(b, r1)
				r = r2
			}
			b = appendU4(b, r)
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(b, s[start:]...)
}

// appendU4 appends r (at most U+FFFF) as \uXXXX.
func appendU4(b []byte, r rune) []byte {
	return append(b, '\\', 'u', lowerHex[r>>12&0xF], lowerHex[r>>8&0xF], lowerHex[r>>4&0xF], lowerHex[r&0xF])
}
