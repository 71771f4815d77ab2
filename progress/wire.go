package progress

// The wire contract: the names a pipeline relies on. DESIGN.md and README.md
// document them as a table; changing one is a breaking change.
const (
	// ScopeName is the instrumentation scope of every record this package
	// emits, so a pipeline selects progress records without guessing.
	ScopeName = "github.com/progressotel/progressotel/progress"

	// EventType is the fixed eventType of a progress event (seed schema).
	EventType = "ResourceTransitionProgressEvent"
	// TransitionEventType is the eventType of a condition transition.
	TransitionEventType = "ConditionTransition"

	// AttrEventType holds EventType or TransitionEventType.
	AttrEventType = "progress.event_type"
	// DetailsPrefix prefixes every flattened detail key. Nested keys are
	// joined with DetailsSeparator; see [Flatten] for escaping.
	DetailsPrefix = "progress.details."
	// DetailsSeparator joins the segments of a nested detail path.
	DetailsSeparator = "."

	AttrComponentName      = "progress.component.name"
	AttrComponentVersion   = "progress.component.version"
	AttrResourceType       = "progress.resource.type"
	AttrResourceID         = "progress.resource.id"
	AttrResourceNamespace  = "progress.resource.namespace"
	AttrResourceUID        = "progress.resource.uid"
	AttrObservedGeneration = "progress.observed_generation"
	// ScopePrefix prefixes each key of the tenant scope map
	// (progress.scope.organization, progress.scope.project).
	ScopePrefix = "progress.scope."
	// AttrTenant is the routing key of the collector: see [Envelope.Tenant].
	AttrTenant = "progress.tenant"
	// AttrSequence is a contiguous per-operation counter: see [Recorder].
	AttrSequence = "progress.sequence"
	// AttrTruncated is true when Limits cut something from the record.
	AttrTruncated = "progress.truncated"

	// TraceCtxPrefix prefixes each tracectx value stamped on a record
	// (tracectx.transactionid, ...), as Ignition's logstash lines had them.
	TraceCtxPrefix = "tracectx."

	// Transition payload keys, under the stream's own key:
	// progress.<stream>.status, progress.<stream>.previous.reason, ...
	transitionPrefix = "progress."
)

// Redacted replaces a secret value.
const Redacted = "[REDACTED]"
