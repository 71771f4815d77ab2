package ansible

import (
	"errors"

	"go.opentelemetry.io/otel/semconv/v1.43.0/cicdconv"

	"github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/internal/kit/adapter"
)

// stopOutcome is the outcome of what a stopped run (runEnd.cancelled) cut
// short, and of the run: cancelled, or timeout when its deadline passed.
func stopOutcome(o runEnd) string {
	if runResult(o) == cicdconv.PipelineResultTimeout {
		return outcome.TimedOut
	}
	return outcome.Cancelled
}

// runResult is cicd.pipeline.result of a run that failed (docs/conventions.md
// has the table): a vars_prompt that nothing answers stops the run as
// waiting on input would time out; a cancelled or timed-out context says
// so; a run that could not start or whose event stream broke off is an
// error of the machinery around Ansible; anything else Ansible's failure.
func runResult(o runEnd) cicdconv.PipelineResultAttr {
	var prompt *VarsPromptError
	switch r := adapter.ResultOf(o.err); {
	case errors.As(o.err, &prompt):
		return cicdconv.PipelineResultTimeout
	case r != cicdconv.PipelineResultFailure:
		return r
	case o.reason == "cancelled":
		return cicdconv.PipelineResultCancellation
	case o.err != nil && o.rc < 0:
		return cicdconv.PipelineResultError
	}
	return cicdconv.PipelineResultFailure
}
