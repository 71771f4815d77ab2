package wire

import "github.com/progressotel/progressotel/tncomessage"

// The wire contract: the names a pipeline relies on. Changing one is a
// breaking change.
const (
	// ScopeName is the instrumentation scope of every progress record, so
	// a pipeline selects them without guessing.
	ScopeName = tncomessage.ScopeName
	// ScopeVersion is the instrumentation scope version: the module's.
	ScopeVersion = tncomessage.ScopeVersion

	// EventType is the eventType of a progress event (Ignition's
	// ResourceTransitionProgressEvent).
	EventType = tncomessage.EventType
	// TransitionEventType is the eventType of a condition transition.
	TransitionEventType = tncomessage.TransitionEventType

	// AttrEventType holds EventType or TransitionEventType.
	AttrEventType = tncomessage.AttrEventType
	// DetailsPrefix prefixes every flattened detail key.
	DetailsPrefix = tncomessage.DetailsPrefix
	// DetailsSeparator joins the segments of a nested detail path.
	DetailsSeparator = tncomessage.DetailsSeparator
	// ValueKey is the detail key of top-level details that are not a map
	// or struct: progress.details.value.
	ValueKey = tncomessage.ValueKey

	AttrComponentName      = tncomessage.AttrComponentName
	AttrComponentVersion   = tncomessage.AttrComponentVersion
	AttrResourceType       = tncomessage.AttrResourceType
	AttrResourceID         = tncomessage.AttrResourceID
	AttrResourceNamespace  = tncomessage.AttrResourceNamespace
	AttrResourceUID        = tncomessage.AttrResourceUID
	AttrObservedGeneration = tncomessage.AttrObservedGeneration
	// ScopePrefix prefixes each key of the tenant scope map
	// (progress.scope.organization, progress.scope.project).
	ScopePrefix = tncomessage.ScopePrefix
	// AttrTenant is the routing key of the collector: see
	// progress.Envelope.Tenant.
	AttrTenant = tncomessage.AttrTenant
	// AttrSequence is a contiguous per-operation counter.
	AttrSequence = tncomessage.AttrSequence
	// AttrTruncated is true when limits cut something from the record.
	AttrTruncated = tncomessage.AttrTruncated

	// TraceCtxPrefix prefixes each tracectx value stamped on a record
	// (tracectx.transactionid, ...), as Ignition's logstash lines had them.
	TraceCtxPrefix = tncomessage.TraceCtxPrefix
)

// Markers written in place of values.
const (
	// Redacted replaces a secret value.
	Redacted = tncomessage.Redacted
	// TruncatedSuffix ends a string that was cut.
	TruncatedSuffix = tncomessage.TruncatedSuffix
	// TruncatedDepth replaces a value nested deeper than the depth limit.
	TruncatedDepth = tncomessage.TruncatedDepth
)
