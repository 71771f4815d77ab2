package progress

import (
	"time"

	"go.opentelemetry.io/otel/log"
)

// The common catalogue: event types every driver has, so that TNCO can draw
// a progress bar for any driver. Their detail keys are listed on each
// constructor and are part of the wire contract.
const (
	TypeOperationStarted   = "common/OperationStarted"
	TypeProgress           = "common/Progress"
	TypeOperationCompleted = "common/OperationCompleted"
	TypeOperationFailed    = "common/OperationFailed"
	// TypeEventsDropped reports records lost before export: see otelbridge.
	TypeEventsDropped = "common/EventsDropped"
)

// OperationStarted reports the start of a lifecycle transition.
// Details: operation (e.g. "Install").
func OperationStarted(operation string) Event {
	return Event{Type: TypeOperationStarted, Details: map[string]any{"operation": operation}}
}

// UnknownTotal is the total of Progress when the number of steps is not
// known (yet): the event then has no total, and a consumer shows the
// completed count alone.
const UnknownTotal = -1

// Progress reports completed of total steps. Details: completed, total and,
// when unit is not empty, unit ("tasks", "bytes", ...). A consumer draws
// completed/total. A negative total (UnknownTotal) is left out: an unknown
// total is said by its absence, never by a total of 0.
func Progress(completed, total int64, unit string) Event {
	d := map[string]any{"completed": completed}
	if total >= 0 {
		d["total"] = total
	}
	if unit != "" {
		d["unit"] = unit
	}
	return Event{Type: TypeProgress, Details: d}
}

// OperationCompleted reports a successful end. Details: operation,
// durationMs (omitted when duration is 0).
func OperationCompleted(operation string, duration time.Duration) Event {
	d := map[string]any{"operation": operation}
	if duration > 0 {
		d["durationMs"] = duration.Milliseconds()
	}
	return Event{Type: TypeOperationCompleted, Details: d}
}

// Ignition failure codes (failureDetails.failureCode) of OperationFailed,
// as the adapters and the progressotel command use them. A driver may use
// others of Ignition's.
const (
	// FailureInfrastructure: the work itself failed: a task on a host, a
	// resource operation, a Kubernetes object (kstatus Failed, or gone).
	FailureInfrastructure = "INFRASTRUCTURE_ERROR"
	// FailureResourceNotFound: a target could not be reached (an
	// unreachable Ansible host).
	FailureResourceNotFound = "RESOURCE_NOT_FOUND"
	// FailureRejected: a request was refused: validation, a field-manager
	// conflict, RBAC, an unknown kind.
	FailureRejected = "REQUEST_REJECTED"
	// FailureTimeout: the work was not done in time.
	FailureTimeout = "TIMEOUT"
	// FailureInternal: the tool could not run or was stopped: missing,
	// bad configuration, crashed, cancelled, the API server unreachable.
	// The progressotel command's default.
	FailureInternal = "INTERNAL_ERROR"
)

// OperationFailed reports a failed end at severity ERROR. Details:
// operation, failureCode (Ignition's failureDetails.failureCode, e.g.
// "INTERNAL_ERROR", "RESOURCE_NOT_FOUND") and description, which must be
// user-safe text. The failure code is also its ErrorType (error.type).
func OperationFailed(operation, failureCode, description string) Event {
	return Event{
		Type:      TypeOperationFailed,
		Severity:  log.SeverityError,
		Details:   map[string]any{"operation": operation, "failureCode": failureCode, "description": description},
		ErrorType: failureCode,
	}
}

// EventsDropped reports count records lost between since and until, at
// severity WARN. Details: count, since, until (RFC 3339), reason.
func EventsDropped(count int64, since, until time.Time, reason string) Event {
	return Event{
		Type:     TypeEventsDropped,
		Severity: log.SeverityWarn,
		Details: map[string]any{
			"count": count, "since": since.UTC().Format(time.RFC3339Nano),
			"until": until.UTC().Format(time.RFC3339Nano), "reason": reason,
		},
	}
}
