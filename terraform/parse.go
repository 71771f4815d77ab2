package terraform

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// The decoder's fast path, kept because the adapter's CPU goal (at most 5%
// of the tool's) fails with encoding/json alone (BenchmarkAdapterCPU,
// BenchmarkStream; BENCHMARKS.md). parseFast reads the UI's small, fixed
// shape directly, and gives up (returns false) on anything it is not sure
// to read exactly as encoding/json would: a key that differs from a known
// one only in case, a null or a value of another type for a known key, deep
// nesting, and any invalid JSON. The caller then decodes the line with
// encoding/json, so the result is always encoding/json's (FuzzParse).

// maxFastDepth bounds the nesting the fast path follows.
const maxFastDepth = 64

// fastReader reads one line of JSON.
type fastReader struct {
	b []byte
	i int
}

// parseFast decodes line into m (which must be zero), if it can.
func parseFast(line []byte, m *message) bool {
	r := fastReader{b: line}
	ok := r.object(func(key []byte) bool {
		switch string(key) {
		case "@level":
			return r.str(&m.Level)
		case "@message":
			return r.str(&m.Message)
		case "@timestamp":
			return r.str(&m.Timestamp)
		case "type":
			return r.str(&m.Type)
		case "tofu":
			return r.str(&m.Tofu)
		case "terraform":
			return r.str(&m.Terraform)
		case "ui":
			return r.str(&m.UI)
		case "hook":
			m.Hook = cmp.Or(m.Hook, &hookMsg{})
			return r.hook(m.Hook)
		case "change":
			m.Change = cmp.Or(m.Change, &changeMsg{})
			return r.change(m.Change)
		case "changes":
			m.Changes = cmp.Or(m.Changes, &ChangeSummary{})
			return r.changes(m.Changes)
		case "outputs":
			return r.raw(&m.Outputs)
		case "diagnostic":
			m.Diag = cmp.Or(m.Diag, &Diagnostic{})
			return r.diagnostic(m.Diag)
		}
		return r.unknown(key, 1)
	}, 1)
	r.space()
	return ok && r.i == len(r.b)
}

func (r *fastReader) hook(h *hookMsg) bool {
	return r.object(func(key []byte) bool {
		switch string(key) {
		case "resource":
			return r.resource(&h.Resource)
		case "action":
			return r.str(&h.Action)
		case "id_key":
			return r.str(&h.IDKey)
		case "id_value":
			return r.str(&h.IDValue)
		case "elapsed_seconds":
			return r.float(&h.Elapsed)
		case "provisioner":
			return r.str(&h.Provisioner)
		case "output":
			return r.str(&h.Output)
		}
		return r.unknown(key, 2)
	}, 2)
}

func (r *fastReader) resource(a *resourceAddr) bool {
	return r.object(func(key []byte) bool {
		switch string(key) {
		case "addr":
			return r.str(&a.Addr)
		case "module":
			return r.str(&a.Module)
		case "resource_type":
			return r.str(&a.ResourceType)
		case "resource_key":
			return r.raw(&a.ResourceKey)
		}
		return r.unknown(key, 3)
	}, 3)
}

func (r *fastReader) change(c *changeMsg) bool {
	return r.object(func(key []byte) bool {
		switch string(key) {
		case "resource":
			return r.resource(&c.Resource)
		case "previous_resource":
			c.PreviousResource = cmp.Or(c.PreviousResource, &resourceAddr{})
			return r.resource(c.PreviousResource)
		case "action":
			return r.str(&c.Action)
		case "reason":
			return r.str(&c.Reason)
		case "importing": // seldom: encoding/json's
			start := r.i
			return r.skip(2) && json.Unmarshal(r.b[start:r.i], &c.Importing) == nil
		}
		return r.unknown(key, 2)
	}, 2)
}

func (r *fastReader) changes(cs *ChangeSummary) bool {
	return r.object(func(key []byte) bool {
		switch string(key) {
		case "operation":
			return r.str(&cs.Operation)
		case "add":
			return r.int(&cs.Add)
		case "change":
			return r.int(&cs.Change)
		case "import":
			return r.int(&cs.Import)
		case "remove":
			return r.int(&cs.Remove)
		case "forget":
			return r.int(&cs.Forget)
		}
		return r.unknown(key, 2)
	}, 2)
}

func (r *fastReader) diagnostic(d *Diagnostic) bool {
	return r.object(func(key []byte) bool {
		switch string(key) {
		case "severity":
			return r.str(&d.Severity)
		case "summary":
			return r.str(&d.Summary)
		case "detail":
			return r.str(&d.Detail)
		case "address":
			return r.str(&d.Address)
		case "range":
			d.Range = cmp.Or(d.Range, &Range{})
			return r.object(func(key []byte) bool {
				switch string(key) {
				case "filename":
					return r.str(&d.Range.Filename)
				case "start":
					return r.pos(&d.Range.Start)
				case "end":
					return r.pos(&d.Range.End)
				}
				return r.unknown(key, 3)
			}, 3)
		}
		return r.unknown(key, 2)
	}, 2)
}

func (r *fastReader) pos(p *Pos) bool {
	return r.object(func(key []byte) bool {
		switch string(key) {
		case "line":
			return r.int(&p.Line)
		case "column":
			return r.int(&p.Column)
		case "byte":
			return r.int(&p.Byte)
		}
		return r.unknown(key, 4)
	}, 4)
}

// object reads an object the mapping reads, calling field for each key
// with the reader on its value; field reads the value. A repeated key is
// read again, as encoding/json does: a scalar replaced, an object merged
// into the first.
func (r *fastReader) object(field func(key []byte) bool, depth int) bool {
	return r.items('{', '}', field, depth)
}

// items reads an object ('{', '}'), calling field for each key with the
// reader on its value, or an array ('[', ']'), calling field(nil) for each
// item.
func (r *fastReader) items(open, close byte, field func(key []byte) bool, depth int) bool {
	if depth > maxFastDepth {
		return false
	}
	r.space()
	if !r.byte(open) {
		return false
	}
	r.space()
	if r.peek() == close {
		r.i++
		return true
	}
	for {
		r.space()
		var key []byte
		if open == '{' {
			k, escaped, _, ok := r.scan()
			if !ok || escaped { // a key with escapes could spell a known one
				return false
			}
			r.space()
			if !r.byte(':') {
				return false
			}
			r.space()
			key = k
		}
		if !field(key) {
			return false
		}
		r.space()
		switch r.peek() {
		case ',':
			r.i++
		case close:
			r.i++
			return true
		default:
			return false
		}
	}
}

// unknown skips the value of a key the mapping does not read. A key that
// is not plain lower-case ASCII could match a known key the way
// encoding/json matches (case-insensitively): give up on it.
func (r *fastReader) unknown(key []byte, depth int) bool {
	for _, c := range key {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '@' || c == '-') {
			return false
		}
	}
	return r.skip(depth)
}

// scan reads a string, reporting whether it holds escapes, and bytes
// outside ASCII; raw is what is between its quotes.
func (r *fastReader) scan() (raw []byte, escaped, unicode, ok bool) {
	if !r.byte('"') {
		return nil, false, false, false
	}
	start := r.i
	for r.i < len(r.b) {
		switch c := r.b[r.i]; {
		case c == '"':
			r.i++
			return r.b[start : r.i-1], escaped, unicode, true
		case c == '\\':
			escaped = true
			r.i++
		case c < 0x20:
			return nil, false, false, false
		case c >= utf8.RuneSelf:
			unicode = true
		}
		r.i++
	}
	return nil, false, false, false
}

// str reads a string into s. A string with escapes or bytes outside ASCII
// is decoded by encoding/json, for its exact handling of both.
func (r *fastReader) str(s *string) bool {
	start := r.i
	raw, escaped, unicode, ok := r.scan()
	if ok && !escaped && !unicode {
		*s = string(raw)
		return true
	}
	return ok && json.Unmarshal(r.b[start:r.i], s) == nil
}

// int reads an integer.
func (r *fastReader) int(n *int) bool {
	lit, ok := r.number()
	v, err := strconv.ParseInt(string(lit), 10, 0)
	*n = int(v)
	return ok && err == nil
}

// float reads a number.
func (r *fastReader) float(f *float64) bool {
	lit, ok := r.number()
	v, err := strconv.ParseFloat(string(lit), 64)
	*f = v
	return ok && err == nil
}

// number reads a JSON number literal.
func (r *fastReader) number() ([]byte, bool) {
	start := r.i
	if r.peek() == '-' {
		r.i++
	}
	switch {
	case r.peek() == '0':
		r.i++
	case r.digits() == 0:
		return nil, false
	}
	if r.peek() == '.' {
		r.i++
		if r.digits() == 0 {
			return nil, false
		}
	}
	if c := r.peek(); c == 'e' || c == 'E' {
		r.i++
		if c := r.peek(); c == '+' || c == '-' {
			r.i++
		}
		if r.digits() == 0 {
			return nil, false
		}
	}
	return r.b[start:r.i], true
}

func (r *fastReader) digits() int {
	start := r.i
	for c := r.peek(); c >= '0' && c <= '9'; c = r.peek() {
		r.i++
	}
	return r.i - start
}

// raw reads any value into a copy of its bytes, as json.RawMessage does.
func (r *fastReader) raw(m *json.RawMessage) bool {
	start := r.i
	ok := r.skip(2)
	*m = append(json.RawMessage(nil), r.b[start:r.i]...)
	return ok
}

// skip validates and skips any value.
func (r *fastReader) skip(depth int) bool {
	if depth > maxFastDepth {
		return false
	}
	switch c := r.peek(); {
	case c == '"':
		return r.skipString()
	case c == '{':
		return r.items('{', '}', func([]byte) bool { return r.skip(depth + 1) }, depth+1)
	case c == '[':
		return r.items('[', ']', func([]byte) bool { return r.skip(depth + 1) }, depth)
	case c == '-' || c >= '0' && c <= '9':
		_, ok := r.number()
		return ok
	case c == 't' || c == 'f' || c == 'n':
		return r.literal("true") || r.literal("false") || r.literal("null")
	}
	return false
}

// skipString skips a string, checking its escapes as encoding/json does.
func (r *fastReader) skipString() bool {
	start := r.i
	_, escaped, _, ok := r.scan()
	return ok && (!escaped || json.Valid(r.b[start:r.i]))
}

func (r *fastReader) literal(s string) bool {
	ok := bytes.HasPrefix(r.b[r.i:], []byte(s))
	if ok {
		r.i += len(s)
	}
	return ok
}

func (r *fastReader) space() {
	for c := r.peek(); c == ' ' || c == '\t' || c == '\n' || c == '\r'; c = r.peek() {
		r.i++
	}
}

func (r *fastReader) peek() byte {
	if r.i < len(r.b) {
		return r.b[r.i]
	}
	return 0
}

func (r *fastReader) byte(c byte) bool {
	if r.peek() != c {
		return false
	}
	r.i++
	return true
}
