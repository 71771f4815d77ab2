package progress

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/base/outcome"
)

// Outcome says how a step's work ended, in words a reader that knows no
// driver understands: the live view draws a step's row from it, and a
// trace backend can filter on it. It is the span attribute
// progress.outcome, which the adapters set on their spans.
type Outcome string

// The outcomes.
const (
	OutcomeOK          Outcome = outcome.OK          // done, nothing changed or no such notion
	OutcomeChanged     Outcome = outcome.Changed     // done, and it changed something
	OutcomeSkipped     Outcome = outcome.Skipped     // not run: a condition said so
	OutcomeFailed      Outcome = outcome.Failed      // failed, and the failure counts
	OutcomeIgnored     Outcome = outcome.Ignored     // failed, and the driver went on
	OutcomeRescued     Outcome = outcome.Rescued     // failed, and a handler recovered
	OutcomeCancelled   Outcome = outcome.Cancelled   // stopped before it ended
	OutcomeTimedOut    Outcome = outcome.TimedOut    // stopped by a time limit
	OutcomeUnreachable Outcome = outcome.Unreachable // its target could not be reached
)

// SetOutcome marks how the step of span ended: a hand-written driver's
// step span shows as changed, skipped or ignored in the live view as an
// adapter's does. A span without an outcome ended as its status says
// (Error is failed, anything else ok). OutcomeFailed also sets the span's
// status to Error, since only a failure that counts is one; every other
// outcome leaves the status alone, so an ignored failure does not fail
// the run's trace. Call it before span.End; a span that is not recording
// is left alone.
func SetOutcome(span trace.Span, o Outcome) {
	if span == nil || !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String(outcome.Key, string(o)))
	if o == OutcomeFailed {
		span.SetStatus(codes.Error, string(o))
	}
}
