package progress

import (
	"time"

	"go.opentelemetry.io/otel/log"
)

// Event is a ResourceTransitionProgressEvent: what happened (Type), the
// driver-specific Details, and the optional Envelope it shares with
// condition transitions. The zero Event is invalid: Record returns an error.
type Event struct {
	// Type is the progressEventType, "<group>/<name>" (see
	// ValidationError for the rule).
	Type string
	// Details is schema-less: nil, a map[string]any of JSON-like values
	// (nested maps and slices allowed), or a struct (or pointer to one)
	// encoded by its json tags as encoding/json would. See progress/wire for
	// the encoding of every other Go value.
	Details any
	// Severity is log.SeverityInfo when zero. Failure events may set
	// log.SeverityWarn or log.SeverityError.
	Severity log.Severity
	// Time is the event's timestamp; the SDK's observed time when zero.
	Time time.Time
	// ErrorType is the class of error of a failure event, written as the
	// record attribute error.type of OpenTelemetry's semantic conventions
	// (never in Details, so the TNCO message is unchanged): a failure
	// code, an event type; low-cardinality. OperationFailed sets it to
	// the failure code.
	ErrorType string

	Envelope
}

// Envelope identifies who emitted an event and about what. It has the same
// field names and shape for progress events and for every transition stream.
// Every field is optional.
type Envelope struct {
	Component Component
	Resource  Resource
	// Scope is the tenant scope: present-only keys such as "organization"
	// and "project". An organization-scoped resource has no "project" key.
	Scope map[string]string
	// ObservedGeneration is the resource's metadata.generation; 0 = unset.
	ObservedGeneration int64
}

// Tenant is the routing key written as progress.tenant: Scope["tenant"],
// else Scope["organization"]. When both are empty, Record falls back to the
// request's tracectx tenantid (x-tracectx-TenantId).
func (e *Envelope) Tenant() string {
	if t := e.Scope["tenant"]; t != "" {
		return t
	}
	return e.Scope["organization"]
}

// Component identifies the emitting service or driver.
type Component struct {
	Name    string
	Version string
}

// Resource identifies the managed resource whose lifecycle is reported.
type Resource struct {
	Type      string
	ID        string
	Namespace string
	UID       string
}

// Condition is a condition's state: status, reason and a user-safe message.
// Messages must be fixed, user-safe text, never raw error strings (CWE-209).
type Condition struct {
	Status  string
	Reason  string
	Message string
}

// IsZero reports whether c has no status, reason or message.
func (c Condition) IsZero() bool { return c == Condition{} }

// Transition is a Kubernetes-style condition change on one stream.
type Transition struct {
	// Stream is the axis: StreamProvisioning, StreamLifecycle or another
	// valid stream name (see ValidationError). It becomes the EventName.
	Stream string
	Condition
	// Previous is the state before this transition; nil when unknown
	// (the first transition, or after a Tracker evicted the resource).
	Previous *Condition
	Time     time.Time
	Envelope
}

// Streams of provisioninglog (unikorn-cloud).
const (
	// StreamProvisioning carries Available-condition transitions.
	StreamProvisioning = "provisioning"
	// StreamLifecycle carries Active-condition (lifecycle/power) transitions.
	StreamLifecycle = "lifecycle"
)
