package progress

import (
	"cmp"

	"github.com/progressotel/progressotel/progress/internal/encode"
)

// Limits bound what one record may carry, whatever the input. Whatever
// exceeds a limit is cut, the record is marked progress.truncated=true, and
// the cut is counted once per record (Stats.Truncated and the
// progress.events.truncated metric). A zero field means its default.
//
// Details are written in sorted key order (map keys, then struct fields in
// declaration order), so what a limit cuts never depends on map iteration
// order.
type Limits struct {
	// MaxDepth is the deepest nesting of maps, slices and structs kept
	// (the details themselves are level 1); a deeper value is replaced by
	// the marker "[truncated: too deep]". It also stops cycles. Default 8.
	MaxDepth int
	// MaxAttributes caps the number of flattened detail attributes.
	// Default 64: with the envelope (at most 14 attributes and the scope
	// keys) and up to 32 tracectx values, a record stays within the SDK's
	// default of 128 attributes (OTEL_LOGRECORD_ATTRIBUTE_COUNT_LIMIT),
	// past which it silently drops the last ones: progress.sequence,
	// progress.truncated and the tracectx values.
	MaxAttributes int
	// MaxStringLen caps one string value, in bytes; a longer one is cut at
	// a UTF-8 boundary and "...[truncated]" is appended. A []byte is cut
	// so that its base64 text fits, a map entry whose key is longer is
	// dropped, and envelope values are cut too. Default 4096.
	MaxStringLen int
	// MaxSliceLen caps the elements of one slice or array. Default 256.
	MaxSliceLen int
	// MaxDetailsBytes is the one hard cap on the encoded size of a
	// record's details (and of a transition's payload): each key costs its
	// length (a flattened attribute's whole key, a map entry's key inside a
	// slice), each value 8 bytes plus its string bytes, each map or slice
	// value 8 bytes plus its entries, at any depth. A string that does not
	// fit is cut to fit; after it the details end. Default 65536.
	//
	// It bounds the work of one call too: Record visits at most about
	// 2 × MaxDetailsBytes bytes' worth of map entries, slice elements and
	// string bytes; a map too wide to visit within that bound is written
	// as the marker "[truncated: map of N entries]", and the details go on.
	MaxDetailsBytes int
}

// DefaultLimits returns the limits used when none are given.
func DefaultLimits() Limits {
	return Limits{MaxDepth: 8, MaxAttributes: 64, MaxStringLen: 4096, MaxSliceLen: 256, MaxDetailsBytes: 64 << 10}
}

// resolve fills in the defaults (of a zero or negative field).
func (l Limits) resolve() encode.Limits {
	d := DefaultLimits()
	return encode.Limits{
		MaxDepth:        cmp.Or(max(l.MaxDepth, 0), d.MaxDepth),
		MaxAttributes:   cmp.Or(max(l.MaxAttributes, 0), d.MaxAttributes),
		MaxStringLen:    cmp.Or(max(l.MaxStringLen, 0), d.MaxStringLen),
		MaxSliceLen:     cmp.Or(max(l.MaxSliceLen, 0), d.MaxSliceLen),
		MaxDetailsBytes: cmp.Or(max(l.MaxDetailsBytes, 0), d.MaxDetailsBytes),
	}
}
