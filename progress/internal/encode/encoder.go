// Package encode is the zero-allocation encoder behind progress.Record: it
// flattens an event's details into attributes under one guard that
// enforces depth, redaction and every limit, so that a record's encoded
// size and the work spent on it are bounded whatever the input.
package encode

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/internal/base/wireformat"
	"github.com/progressotel/progressotel/progress/internal/redact"
	"github.com/progressotel/progressotel/tncomessage"
)

// Limits are progress.Limits with every default filled in.
type Limits struct {
	MaxDepth, MaxAttributes, MaxStringLen, MaxSliceLen, MaxDetailsBytes int
}

// valueCost is what a value costs in the encoded size that
// Limits.MaxDetailsBytes caps (wireformat.DetailsSize defines it): the
// encoder charges it as it writes.
const valueCost = wireformat.ValueCost

// reserve is the room an entry needs beyond its key to be admitted: enough
// for any marker the encoder may write in its place (TruncatedDepth plus
// its valueCost), or for a string cut to fit with TruncatedSuffix.
const reserve = 32

// workFactor bounds the work of one call (map entries and slice elements
// visited, valueCost each; map key bytes sorted; string bytes searched for
// secrets) to workFactor × MaxDetailsBytes; past it the details are cut.
// It bounds the work that writes nothing (a wide map's entries past
// MaxAttributes, redacted strings): written bytes are bounded already.
const workFactor = 2

// Encoder builds one record's attributes. It is pooled: the hot path
// reuses its buffers. It is not safe for concurrent use.
type Encoder struct {
	// Attrs are the record's attributes: whatever the caller appended,
	// then the details.
	Attrs []attribute.KeyValue

	keys *KeyCache
	red  *redact.Rules
	lim  Limits

	size      int  // encoded bytes written (see valueCost)
	work      int  // work spent (see workFactor)
	workLimit int  // workFactor × MaxDetailsBytes
	nattr     int  // detail attributes written
	depth     int  // nesting level being written (the details are 1)
	full      bool // a budget ran out: nothing more is written
	truncated int  // cuts made (limits, fallbacks)
	inKey     bool // the slice being written is inside a private key's lines

	// Scratch stacks: a call appends past the current length and truncates
	// back before it returns, so nested calls share them (SliceValue and
	// MapValue copy their arguments).
	sortBuf []string
	pairs   []mapEntry
	rkeys   []reflectKey
	vals    []attribute.Value
	kvs     []attribute.KeyValue
}

var pool = sync.Pool{New: func() any {
	return &Encoder{Attrs: make([]attribute.KeyValue, 0, 32)}
}}

// Get returns an Encoder for one record.
func Get(keys *KeyCache, red *redact.Rules, lim Limits) *Encoder {
	e := pool.Get().(*Encoder)
	e.keys, e.red, e.lim = keys, red, lim
	e.workLimit = workFactor * lim.MaxDetailsBytes
	return e
}

// Put returns e to the pool; the caller no longer uses e.Attrs.
func Put(e *Encoder) {
	if max(cap(e.Attrs), cap(e.vals), cap(e.kvs), cap(e.pairs), cap(e.sortBuf), cap(e.rkeys)) > 1024 {
		return // do not keep outsized buffers alive
	}
	// The scratch stacks are empty (and cleared) between calls. Only the
	// fields Get does not set are reset: every pointer write costs a
	// write barrier while the GC runs.
	clear(e.Attrs)
	e.Attrs = e.Attrs[:0]
	e.keys, e.red = nil, nil
	e.size, e.work, e.nattr, e.truncated, e.depth = 0, 0, 0, 0, 0
	e.full, e.inKey = false, false
	pool.Put(e)
}

// Truncated reports whether anything was cut or fell back.
func (e *Encoder) Truncated() bool { return e.truncated > 0 }

// Cut counts a cut the caller made (an envelope value, say).
func (e *Encoder) Cut() { e.truncated++ }

// String returns a payload string outside the details (a transition's
// status, reason or message) under the same rules as a detail string:
// cut at MaxStringLen, redacted (private keys, secrets by shape), and
// counted against the size cap.
func (e *Encoder) String(s string) attribute.Value {
	return e.str(s, false)
}

// slot is where one value goes: a flattened attribute below node, when node
// is set (a map or plain struct there is flattened further unless mode is
// whole); otherwise an entry (key) of the MAP value being built in kvs or,
// in elemMode, an element of the SLICE value being built in vals. It is
// passed by value down the walk, so it stays small.
type slot struct {
	node *keyNode
	key  string
	mode slotMode
}

type slotMode uint8

const (
	entryMode slotMode = iota // flattened below node, or a MAP entry
	wholeMode                 // one attribute value at node, not flattened
	elemMode                  // a SLICE element
)

func (s slot) flat() bool { return s.node != nil && s.mode != wholeMode }
func (s slot) elem() bool { return s.mode == elemMode }

// spend charges n units of work; false when the work bound is passed.
func (e *Encoder) spend(n int) bool {
	e.work += n
	if e.work > e.workLimit {
		e.stop()
		return false
	}
	return true
}

// stop marks a budget as spent: everything after this point is cut.
func (e *Encoder) stop() {
	if !e.full {
		e.full = true
		e.truncated++
	}
}

// room is what the size cap leaves.
func (e *Encoder) room() int { return e.lim.MaxDetailsBytes - e.size }

// admit is the one guard every map entry and struct field passes, flattened
// or nested; the walk charged its visit already. It enforces, in order:
// the budgets, the key length (longer than MaxStringLen: dropped),
// MaxAttributes (past it no key is even built), the size cap (the key plus
// room for a marker), and key redaction (a secret key gets Redacted and is
// not admitted). It returns the slot for the entry's value.
func (e *Encoder) admit(parent slot, key string) (slot, bool) {
	if e.full {
		return slot{}, false
	}
	if len(key) > e.lim.MaxStringLen {
		e.truncated++
		return slot{}, false
	}
	var child slot
	var secret bool
	if parent.flat() {
		if e.nattr >= e.lim.MaxAttributes {
			e.stop()
			return slot{}, false
		}
		node, cached := e.keys.lookup(parent.node, key)
		n := 0
		if cached {
			n = len(node.key)
		} else {
			n = keyLen(parent.node, key) // known before the key is built
		}
		if n+reserve > e.room() {
			e.stop()
			return slot{}, false
		}
		e.size += n
		if !cached {
			node = e.keys.child(parent.node, key)
		}
		child.node, secret = node, node.secret
	} else {
		if len(key)+reserve > e.room() {
			e.stop()
			return slot{}, false
		}
		e.size += len(key)
		child.key, secret = key, e.keys.secretKey(key)
	}
	if secret {
		e.put(child, e.fit(tncomessage.Redacted))
		return slot{}, false
	}
	return child, true
}

// admitElem is admit for a slice element.
func (e *Encoder) admitElem() (slot, bool) {
	if e.full || !e.spend(valueCost) {
		return slot{}, false
	}
	if reserve > e.room() {
		e.stop()
		return slot{}, false
	}
	return slot{mode: elemMode}, true
}

// enter is the depth guard of a container put in s: past MaxDepth it
// writes TruncatedDepth there instead and reports false. A container that
// passes goes one level down (e.depth) until leave.
func (e *Encoder) enter(s slot) bool {
	if e.depth+1 > e.lim.MaxDepth {
		e.truncated++
		e.put(s, e.fit(tncomessage.TruncatedDepth))
		return false
	}
	e.depth++
	return true
}

// leave ends what enter started.
func (e *Encoder) leave() { e.depth-- }

// put writes v in s. Scalars are charged here; strings and containers
// were charged when they were built.
func (e *Encoder) put(s slot, v attribute.Value) {
	switch v.Type() {
	case attribute.STRING, attribute.MAP, attribute.SLICE:
	default:
		e.size += valueCost
	}
	switch {
	case s.node != nil:
		e.nattr++
		e.Attrs = append(e.Attrs, attribute.KeyValue{Key: s.node.key, Value: v})
	case s.mode == elemMode:
		e.vals = append(e.vals, v)
	default:
		e.kvs = append(e.kvs, attribute.KeyValue{Key: attribute.Key(s.key), Value: v})
	}
}

// str applies the string rules: MaxStringLen, redaction of private keys
// (line by line inside a slice, where a key file's lines may follow one
// another) and of the secrets free text shows by their shape (the scan
// is charged as work), and the size cap.
func (e *Encoder) str(s string, elem bool) attribute.Value {
	// Redacted before it is cut, so that no secret's first bytes are
	// left before the cut: a secret that starts before it is known by
	// its shape within redact.CutMargin bytes past it.
	long := len(s) > e.lim.MaxStringLen+redact.CutMargin
	if long {
		s = cutUTF8(s, e.lim.MaxStringLen+redact.CutMargin)
	}
	if !e.spend(len(s)) {
		return e.fit(tncomessage.TruncatedSuffix)
	}
	var secret bool
	if elem {
		secret = e.red.SecretLine(&e.inKey, s)
	} else {
		secret = e.red.SecretValue(s)
	}
	if secret {
		s = tncomessage.Redacted
	} else {
		s, _ = e.red.Shapes(s)
	}
	if long || len(s) > e.lim.MaxStringLen {
		e.truncated++
		if len(s) > e.lim.MaxStringLen {
			s = cutUTF8(s, e.lim.MaxStringLen)
		}
		s += tncomessage.TruncatedSuffix
	}
	return e.fit(s)
}

// fit charges s against the size cap, cutting it to what is left (and
// stopping) when it does not fit.
func (e *Encoder) fit(s string) attribute.Value {
	if room := e.room() - valueCost; len(s) > room {
		e.stop()
		n := room - len(tncomessage.TruncatedSuffix)
		if n <= 0 {
			s = ""
		} else {
			s = cutUTF8(s, n) + tncomessage.TruncatedSuffix
		}
	}
	e.size += valueCost + len(s)
	return attribute.StringValue(s)
}

// popSlice returns the SLICE value of e.vals[start:] and pops them. Every
// nested call has popped its own entries, so they are contiguous.
func (e *Encoder) popSlice(start int) attribute.Value {
	v := attribute.SliceValue(e.vals[start:]...)
	clear(e.vals[start:])
	e.vals = e.vals[:start]
	return v
}

// popMap is popSlice for MAP values built in e.kvs.
func (e *Encoder) popMap(start int) attribute.Value {
	v := attribute.MapValue(e.kvs[start:]...)
	clear(e.kvs[start:])
	e.kvs = e.kvs[:start]
	return v
}

// Envelope appends an envelope attribute, key=v, with v cut at
// MaxStringLen. Envelope values are the driver's own identifiers: they
// are bounded, not redacted.
func (e *Encoder) Envelope(key, v string) {
	if len(v) > e.lim.MaxStringLen {
		e.truncated++
		v = cutUTF8(v, e.lim.MaxStringLen) + tncomessage.TruncatedSuffix
	}
	e.Attrs = append(e.Attrs, attribute.String(key, v))
}
