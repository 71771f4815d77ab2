package progress

// Limits bound what one event may carry. Whatever exceeds a limit is cut,
// the record is marked with progress.truncated=true, and the cut is counted
// (Stats.Truncated and the progress.events.truncated metric). The zero value
// of a field means its default.
type Limits struct {
	// MaxDepth is the deepest nesting of maps, slices and structs kept;
	// a deeper value is replaced by TruncatedDepth. It also stops cycles.
	// Default 8.
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
	// a UTF-8 boundary and TruncatedSuffix is appended. Default 4096.
	MaxStringLen int
	// MaxSliceLen caps the elements of one slice. Default 256.
	MaxSliceLen int
	// MaxDetailsBytes caps the string bytes of all details together; later
	// strings are replaced by TruncatedSuffix. Default 65536.
	MaxDetailsBytes int
}

// Markers of truncated data.
const (
	TruncatedSuffix = "...[truncated]"
	TruncatedDepth  = "[truncated: too deep]"
)

// DefaultLimits returns the limits used when none are given.
func DefaultLimits() Limits {
	return Limits{MaxDepth: 8, MaxAttributes: 64, MaxStringLen: 4096, MaxSliceLen: 256, MaxDetailsBytes: 64 << 10}
}

func (l Limits) withDefaults() Limits {
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
	return l
}
