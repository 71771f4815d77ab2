// Package tncomessage builds the TNCO message, the JSON object that TNCO
// receives on Kafka for each progress record, and holds what that takes:
// the names of the wire contract (docs/wire.md), the escaping of detail
// paths, the zero-copy View of a record and the JSON writers.
//
// It is the one builder of the message. The collector's tnco processor
// calls it on every progress record it receives, from any sender (the Go
// library, the Python module, otel-cli), after redacting the record's
// attributes; the Go library calls it for a driver's own JSON lines and
// for tests. A record is read through Record, which the SDK's log record
// (progress/wire) and pdata's log record (the tnco processor) implement.
//
// The module depends on the standard library and the OTel attribute
// types only, so that the collector and the driver share it without
// sharing anything else.
package tncomessage

// Names of the wire contract. docs/wire.md documents them as a
// table; changing one is a breaking change.
const (
	// ScopeName is the instrumentation scope of every progress record.
	ScopeName = "github.com/progressotel/progressotel/progress"
	// ScopeVersion is the module version, written as the scope version.
	ScopeVersion = "0.1.0"

	// EventType is the eventType of a progress event (Ignition's
	// ResourceTransitionProgressEvent).
	EventType = "ResourceTransitionProgressEvent"
	// TransitionEventType is the eventType of a condition transition.
	TransitionEventType = "ConditionTransition"

	// AttrEventType holds EventType or TransitionEventType.
	AttrEventType = "progress.event_type"
	// DetailsRoot is the parent of every detail path.
	DetailsRoot = "progress.details"
	// DetailsSeparator joins the segments of a detail path.
	DetailsSeparator = "."
	// DetailsPrefix prefixes every flattened detail key.
	DetailsPrefix = DetailsRoot + DetailsSeparator
	// ValueKey is the detail key of a top-level value that is not a map
	// or struct (a string, a slice, a marker).
	ValueKey = "value"

	AttrComponentName      = "progress.component.name"
	AttrComponentVersion   = "progress.component.version"
	AttrResourceType       = "progress.resource.type"
	AttrResourceID         = "progress.resource.id"
	AttrResourceNamespace  = "progress.resource.namespace"
	AttrResourceUID        = "progress.resource.uid"
	AttrObservedGeneration = "progress.observed_generation"
	// ScopePrefix prefixes each key of the tenant scope map.
	ScopePrefix = "progress.scope."
	// AttrTenant is the collector's routing key.
	AttrTenant = "progress.tenant"
	// AttrSequence is the per-operation sequence number.
	AttrSequence = "progress.sequence"
	// AttrTruncated is true when limits cut something from the record.
	AttrTruncated = "progress.truncated"

	// TraceCtxPrefix prefixes each stamped tracectx value.
	TraceCtxPrefix = "tracectx."
	// TxKey is the tracectx transaction id, the one the pretty format shows.
	TxKey = TraceCtxPrefix + "transactionid"

	// TransitionPrefix starts a transition's payload keys:
	// progress.<stream>.status, progress.<stream>.previous.reason, ...
	TransitionPrefix = "progress."
)

// Markers written in place of values.
const (
	// Redacted replaces a secret value.
	Redacted = "[REDACTED]"
	// TruncatedSuffix ends a string that was cut.
	TruncatedSuffix = "...[truncated]"
	// TruncatedDepth replaces a value nested deeper than the depth limit.
	TruncatedDepth = "[truncated: too deep]"
	// UnsupportedPrefix starts the fallback of a value JSON cannot hold,
	// "[unsupported: <type>]", and of a method that failed or panicked,
	// "[unsupported: <type>: <what>]".
	UnsupportedPrefix = "[unsupported: "
)
