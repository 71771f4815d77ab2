package progress

import "github.com/progressotel/progressotel/progress/internal/encode"

// Limits bound what one record may carry, whatever the input. Whatever
// exceeds a limit is cut, the record is marked with progress.truncated=true,
// and the cut is counted once per record (Stats.Truncated and the
// progress.events.truncated metric). The zero value of a field means its
// default.
//
// Details are written in sorted key order (map keys, then struct fields in
// declaration order), so what a limit cuts never depends on map iteration
// order: past MaxAttributes or MaxDetailsBytes, the rest of the details is
// cut.
type Limits struct {
	// MaxDepth is the deepest nesting of maps, slices and structs kept
	// (the details themselves are level 1); a deeper value is replaced by
	// the marker "[truncated: too deep]". It also stops cycles. Default 8.
	MaxDepth int
	// MaxAttributes caps the number of flattened detail attributes.
	// Default 64: with the envelope (at most 14 attributes and the scope
	// keys) and up to 32 stamped tracectx values, a record stays within the
	// SDK's default of 128 attributes per record
	// (OTEL_LOGRECORD_ATTRIBUTE_COUNT_LIMIT). Past that limit the SDK drops
	// the last attributes silently: progress.sequence, progress.truncated
	// and the tracectx values, on which routing and gap detection depend.
	MaxAttributes int
	// MaxStringLen caps one string value, in bytes; a longer one is cut at
	// a UTF-8 boundary and "...[truncated]" is appended. A []byte is cut
	// so that its base64 text fits, a map entry whose key is longer is
	// dropped, and envelope values are cut too. Default 4096.
	MaxStringLen int
	// MaxSliceLen caps the elements of one slice or array. Default 256.
	MaxSliceLen int
	// MaxDetailsBytes is the one hard cap on the encoded size of a
	// record's details (and of a transition's payload). Every byte counts:
	// each key costs its length (a flattened attribute's whole key, a map
	// entry's key inside a slice), each value costs 8 bytes plus its string
	// bytes, and each map or slice value costs 8 bytes plus its entries, at
	// any depth, so a million empty strings or nested empty slices cost
	// what their count says. A string that does not fit is cut to fit;
	// after it the details end. Default 65536.
	//
	// It bounds the work of one call too: Record visits at most about
	// 2 × MaxDetailsBytes bytes' worth of map entries, slice elements and
	// string bytes, whatever the input; a map too wide to visit within
	// that bound (its entries, or the bytes of its keys to sort) is
	// written as the marker "[truncated: map of N entries]", and the
	// details go on after it.
	MaxDetailsBytes int
}

// DefaultLimits returns the limits used when none are given.
func DefaultLimits() Limits {
	return Limits{MaxDepth: 8, MaxAttributes: 64, MaxStringLen: 4096, MaxSliceLen: 256, MaxDetailsBytes: 64 << 10}
}

// resolve fills in the defaults.
func (l Limits) resolve() encode.Limits {
	d := DefaultLimits()
	if l.MaxDepth <= 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxAttributes <= 0 {
		l.MaxAttributes = d.MaxAttributes
	}
	if l.MaxStringLen <= 0 {
		l.MaxStringLen = d.MaxStringLen
	}
	if l.MaxSliceLen <= 0 {
		l.MaxSliceLen = d.MaxSliceLen
	}
	if l.MaxDetailsBytes <= 0 {
		l.MaxDetailsBytes = d.MaxDetailsBytes
	}
	return encode.Limits(l)
}
