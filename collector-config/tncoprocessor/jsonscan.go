package tncoprocessor

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// A driver's message is taken as it is only in the exact form the
// collector would write for it: the form of encoding/json (no whitespace,
// keys in byte order and unique, strings and numbers written as
// encoding/json writes the value they hold). scanDetails checks that form
// while it applies the redaction processor's log-body rules to the
// details, which come from the driver; anything else is handed to the
// stock processors. So the message the fast path forwards is the one the
// stock path would have built, byte for byte.

// maxDepth bounds the nesting scanDetails follows; deeper details take the
// stock path.
const maxDepth = 64

// edit replaces data[start:end] by repl.
type edit struct {
	start, end int
	repl       []byte
}

type scanner struct {
	r     *check
	data  []byte
	pos   int
	edits []edit
	// dec holds the last decoded string value (one with escapes); keys
	// get memory of their own (object).
	dec []byte
}

// errNotCanonical: the text is not JSON, or not in encoding/json's form.
var errNotCanonical = errors.New("not canonical JSON")

// scanDetails checks the value at s.pos, an object, and collects in
// s.edits what the log-body rules change in it.
func (s *scanner) scanDetails() error {
	if s.pos >= len(s.data) || s.data[s.pos] != '{' {
		return errNotCanonical
	}
	return s.value(0, true)
}

// value scans one value. With redact false (the value of a blocked key,
// which is masked whole) it only checks the form.
func (s *scanner) value(depth int, redact bool) error {
	if s.pos >= len(s.data) || depth > maxDepth {
		return errNotCanonical
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		return s.object(depth, redact)
	case c == '[':
		s.pos++
		if s.pos < len(s.data) && s.data[s.pos] == ']' {
			s.pos++
			return nil
		}
		for {
			if err := s.value(depth+1, redact); err != nil {
				return err
			}
			if end, err := s.next(']'); end || err != nil {
				return err
			}
		}
	case c == '"':
		start := s.pos
		str, err := s.str(&s.dec)
		if err != nil {
			return err
		}
		if redact {
			s.scalar(start, str)
		}
		return nil
	case c == 't':
		return s.literal("true", redact)
	case c == 'f':
		return s.literal("false", redact)
	case c == 'n':
		start := s.pos
		if err := s.literal("null", false); err != nil {
			return err
		}
		if redact {
			s.scalar(start, "") // AsString of an empty value
		}
		return nil
	case c == '-' || '0' <= c && c <= '9':
		start := s.pos
		if err := s.number(); err != nil {
			return err
		}
		if redact {
			s.scalar(start, unsafe.String(&s.data[start], s.pos-start))
		}
		return nil
	}
	return errNotCanonical
}

func (s *scanner) object(depth int, redact bool) error {
	s.pos++ // {
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return nil
	}
	var prevKey string
	for i := 0; ; i++ {
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return errNotCanonical
		}
		// A key with escapes is decoded into memory of its own: the
		// objects inside its value have keys too.
		key, err := s.str(nil)
		if err != nil {
			return err
		}
		if i > 0 && key <= prevKey {
			return errNotCanonical // out of order, or repeated
		}
		prevKey = key
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return errNotCanonical
		}
		s.pos++
		if redact && s.r.keyBlocked(key) {
			start := s.pos
			isStr := s.pos < len(s.data) && s.data[s.pos] == '"'
			var text string
			if isStr {
				if text, err = s.str(&s.dec); err != nil {
					return err
				}
			} else if err := s.value(depth+1, false); err != nil {
				return err
			}
			s.edits = append(s.edits, edit{start, s.pos, appendString(nil, mask(text))})
		} else if err := s.value(depth+1, redact); err != nil {
			return err
		}
		if end, err := s.next('}'); end || err != nil {
			return err
		}
	}
}

// next moves past the ',' or the closing byte after a member or element,
// and reports whether it was the closing one.
func (s *scanner) next(closing byte) (bool, error) {
	if s.pos < len(s.data) && (s.data[s.pos] == ',' || s.data[s.pos] == closing) {
		s.pos++
		return s.data[s.pos-1] == closing, nil
	}
	return false, errNotCanonical
}

// scalar applies the blocked values to a scalar's text, written at
// data[start:s.pos]; a changed text becomes a string.
func (s *scanner) scalar(start int, text string) {
	if p := s.r.maskValues(text); p != text {
		s.edits = append(s.edits, edit{start, s.pos, appendString(nil, p)})
	}
}

func (s *scanner) literal(lit string, redact bool) error {
	if len(s.data)-s.pos < len(lit) || string(s.data[s.pos:s.pos+len(lit)]) != lit {
		return errNotCanonical
	}
	start := s.pos
	s.pos += len(lit)
	if redact {
		s.scalar(start, lit)
	}
	return nil
}

// str reads the string at s.pos and returns its text: a view of data when
// it holds no escape, else decoded into *buf (new memory when buf is nil).
// It fails unless the string is written as appendString writes its text.
func (s *scanner) str(buf *[]byte) (string, error) {
	s.pos++ // "
	start := s.pos
	d := s.data
	escaped := false
	for s.pos < len(d) {
		c := d[s.pos]
		switch {
		case c == '"':
			raw := d[start:s.pos]
			s.pos++
			if !escaped {
				return unsafe.String(unsafe.SliceData(raw), len(raw)), nil
			}
			return s.decode(raw, buf)
		case c == '\\':
			if !s.canonicalEscape() {
				return "", errNotCanonical
			}
			escaped = true
		case c < utf8.RuneSelf:
			if !htmlSafe[c] {
				return "", errNotCanonical // a control character, or <, >, & unescaped
			}
			s.pos++
		default:
			r, size := utf8.DecodeRune(d[s.pos:])
			if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
				return "", errNotCanonical
			}
			s.pos += size
		}
	}
	return "", errNotCanonical
}

// canonicalEscape checks the escape at s.pos and moves past it: only the
// escapes appendString writes, for the characters it escapes.
func (s *scanner) canonicalEscape() bool {
	d := s.data
	if s.pos+1 >= len(d) {
		return false
	}
	if c := d[s.pos+1]; c != 'u' {
		s.pos += 2
		return unescaped[c] != 0
	}
	if s.pos+6 > len(d) {
		return false
	}
	h := d[s.pos+2 : s.pos+6]
	for _, c := range h {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	switch r := hex4(h); {
	case r < 0x20 && escaped[r] == 0, r == '<', r == '>', r == '&', r == '\u2028', r == '\u2029':
		s.pos += 6
		return true
	}
	return false
}

// decode returns the text of raw, a canonical string body with escapes.
func (s *scanner) decode(raw []byte, buf *[]byte) (string, error) {
	var b []byte
	if buf != nil {
		b = (*buf)[:0]
	}
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		i++
		if raw[i] == 'u' {
			b = utf8.AppendRune(b, hex4(raw[i+1:i+5]))
			i += 4
		} else {
			b = append(b, unescaped[raw[i]])
		}
	}
	if buf == nil {
		return string(b), nil
	}
	*buf = b
	return unsafe.String(unsafe.SliceData(b), len(b)), nil
}

// hex4 reads four lower-case hex digits (checked by canonicalEscape).
func hex4(h []byte) rune {
	r, _ := strconv.ParseUint(unsafe.String(&h[0], 4), 16, 32)
	return rune(r)
}

// numChar holds the bytes a JSON number is written with.
var numChar = func() (t [256]bool) {
	for _, c := range "+-.0123456789Ee" {
		t[c] = true
	}
	return t
}()

// number reads the number at s.pos: it must be written as encoding/json
// writes the value pdata would hold for it (an int64 when the text is an
// integer in range, else a double). Text in that form is valid JSON, so
// comparing it with the value written back checks its grammar too.
func (s *scanner) number() error {
	start := s.pos
	for s.pos < len(s.data) && numChar[s.data[s.pos]] {
		s.pos++
	}
	text := unsafe.String(&s.data[start], s.pos-start)
	var tmp [32]byte
	if !strings.ContainsAny(text, ".eE") { // (strconv's errors allocate)
		if n, err := strconv.ParseInt(text, 10, 64); err == nil && string(strconv.AppendInt(tmp[:0], n, 10)) == text {
			return nil
		}
	}
	if f, err := strconv.ParseFloat(text, 64); err == nil && string(appendFloat(tmp[:0], f)) == text {
		return nil
	}
	return errNotCanonical
}

// applyEdits appends data[start:end] to b with s.edits (which lie inside
// it, in order) applied.
func (s *scanner) applyEdits(b []byte, start, end int) []byte {
	at := start
	for _, e := range s.edits {
		b = append(b, s.data[at:e.start]...)
		b = append(b, e.repl...)
		at = e.end
	}
	return append(b, s.data[at:end]...)
}
