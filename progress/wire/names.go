package wire

import "github.com/progressotel/progressotel/internal/base/wireformat"

// The wire contract: the names a pipeline relies on. Changing one is a
// breaking change.
const (
	// ScopeName is the instrumentation scope of every progress record, so
	// a pipeline selects them without guessing.
	ScopeName = wireformat.ScopeName
	// ScopeVersion is the instrumentation scope version: the module's.
	ScopeVersion = wireformat.ScopeVersion

	// EventType is the eventType of a progress event (Ignition's
	// ResourceTransitionProgressEvent).
	EventType = wireformat.EventType
	// TransitionEventType is the eventType of a condition transition.
	TransitionEventType = wireformat.TransitionEventType

	// AttrEventType holds EventType or TransitionEventType.
	AttrEventType = wireformat.AttrEventType
	// DetailsPrefix prefixes every flattened detail key.
	DetailsPrefix = wireformat.DetailsPrefix
	// DetailsSeparator joins the segments of a nested detail path.
	DetailsSeparator = wireformat.DetailsSeparator
	// ValueKey is the detail key of top-level details that are not a map
	// or struct: progress.details.value.
	ValueKey = wireformat.ValueKey

	AttrComponentName      = wireformat.AttrComponentName
	AttrComponentVersion   = wireformat.AttrComponentVersion
	AttrResourceType       = wireformat.AttrResourceType
	AttrResourceID         = wireformat.AttrResourceID
	AttrResourceNamespace  = wireformat.AttrResourceNamespace
	AttrResourceUID        = wireformat.AttrResourceUID
	AttrObservedGeneration = wireformat.AttrObservedGeneration
	// ScopePrefix prefixes each key of the tenant scope map
	// (progress.scope.organization, progress.scope.project).
	ScopePrefix = wireformat.ScopePrefix
	// AttrTenant is the routing key of the collector: see
	// progress.Envelope.Tenant.
	AttrTenant = wireformat.AttrTenant
	// AttrSequence is a contiguous per-operation counter.
	AttrSequence = wireformat.AttrSequence
	// AttrTruncated is true when limits cut something from the record.
	AttrTruncated = wireformat.AttrTruncated

	// TraceCtxPrefix prefixes each tracectx value stamped on a record
	// (tracectx.transactionid, ...), as Ignition's logstash lines had them.
	TraceCtxPrefix = wireformat.TraceCtxPrefix
)

// Markers written in place of values.
const (
	// Redacted replaces a secret value.
	Redacted = wireformat.Redacted
	// TruncatedSuffix ends a string that was cut.
	TruncatedSuffix = wireformat.TruncatedSuffix
	// TruncatedDepth replaces a value nested deeper than the depth limit.
	TruncatedDepth = wireformat.TruncatedDepth
)
