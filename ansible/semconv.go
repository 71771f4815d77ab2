package ansible

import (
	"errors"

	"go.opentelemetry.io/otel/semconv/v1.43.0/cicdconv"

	spanoutcome "github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/internal/kit/adapter"
)

// tally counts a task's host results by outcome, for the task span's
// outcome.
type tally struct {
	ok, changed, skipped, failed, ignored, unreachable int
	stopped                                            string // cancelled or timeout: the run stopped while a host ran it
}

// add counts one host result; status is the host span's
// ansible.host.status, whose words are package outcome's.
func (t *tally) add(status string) {
	switch status {
	case spanoutcome.OK:
		t.ok++
	case spanoutcome.Changed:
		t.changed++
	case spanoutcome.Skipped:
		t.skipped++
	case spanoutcome.Failed:
		t.failed++
	case spanoutcome.Ignored:
		t.ignored++
	case spanoutcome.Unreachable:
		t.unreachable++
	}
}

// outcome is the task's outcome over its hosts, the worst first: failed,
// cancelled or timeout (the run stopped in it), unreachable (every
// failure was), ignored, changed, skipped (every host
// was), else ok.
func (t *tally) outcome() string {
	switch {
	case t.failed > 0:
		return spanoutcome.Failed
	case t.stopped != "":
		return t.stopped
	case t.unreachable > 0:
		return spanoutcome.Unreachable
	case t.ignored > 0:
		return spanoutcome.Ignored
	case t.changed > 0:
		return spanoutcome.Changed
	case t.skipped > 0 && t.ok == 0:
		return spanoutcome.Skipped
	}
	return spanoutcome.OK
}

// markStopped marks the tasks that a host was still running when a
// cancelled or timed-out run stopped: they end cancelled or timeout.
func (d *decoder) markStopped(o outcome) {
	if o.err == nil {
		return
	}
	var out string
	switch runResult(o) {
	case cicdconv.PipelineResultCancellation:
		out = spanoutcome.Cancelled
	case cicdconv.PipelineResultTimeout:
		out = spanoutcome.TimedOut
	default:
		return
	}
	for _, h := range d.hosts {
		h.task.tally.stopped = out
	}
}

// runResult is cicd.pipeline.result of a run that failed (docs/conventions.md
// has the table): a vars_prompt that nothing answers stops the run as
// waiting on input would time out; a cancelled or timed-out context says
// so; a run that could not start or whose event stream broke off is an
// error of the machinery around Ansible; anything else Ansible's failure.
func runResult(o outcome) cicdconv.PipelineResultAttr {
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
