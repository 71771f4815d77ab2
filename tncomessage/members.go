package tncomessage

// The member names of the TNCO message (docs/collector.md, "The TNCO
// message"), in byte order, the order in which the message writes them.
// Every program that writes or reads them takes them from here: the
// builder, the JSON lines of the Go library, the Ignition event of
// progress/wire. tracectx values are top-level members too, under their
// attribute key (TraceCtxPrefix).
const (
	MemberTimestamp          = "@timestamp"
	MemberComponent          = "component"
	MemberDetails            = "details"
	MemberEventType          = "eventType"
	MemberLevel              = "level"
	MemberObservedGeneration = "observedGeneration"
	MemberProgressEventType  = "progressEventType"
	MemberResource           = "resource"
	MemberScope              = "scope"
	MemberSequence           = "sequence"
	MemberSpanID             = "spanId"
	MemberTenant             = "tenant"
	MemberTraceID            = "traceId"
	MemberTruncated          = "truncated"
)

// The members of a transition's details, and of its previous condition.
const (
	MemberMessage  = "message"
	MemberPrevious = "previous"
	MemberReason   = "reason"
	MemberStatus   = "status"
)
