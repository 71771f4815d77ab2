package ansible

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Stream decodes an ansible-runner job-event stream from r, one JSON event
// per line as `ansible-runner run --json` prints it (the AWX job-event
// format), and records each event while it reads it, inside the playbook →
// play → task → host spans under the span in ctx. It is for drivers that
// run Ansible their own way: an AWX job's events, their own runner, a
// recorded run.
//
// Lines that are not job events are skipped, counted in
// Result.SkippedLines and logged (see WithLogger); they never stop the
// stream. Stream reads until io.EOF, a read error or the end of ctx. It
// does not close r. When ctx ends while a Read is blocked, Stream returns
// at once only if r has a SetReadDeadline method (pipes, network
// connections); otherwise when that Read returns.
//
// The error is nil for a stream that ended with Ansible's recap, whatever
// the playbook's outcome (see Result.OK). Otherwise it is ctx's error, the
// read error, a *VarsPromptError, ErrNoEvents, or ErrStatsMissing; the
// Result holds what was decoded in every case. Every stream is reported as
// common/OperationStarted then common/OperationCompleted or
// common/OperationFailed, even one without a single job event: a stream
// that ends before Ansible's recap (playbook_on_stats) is a failure whose
// description says so, with Ansible's own error when its text holds one
// (TestStreamCut, TestStreamNotEvents). A ctx cancelled with a cause
// (context.WithCancelCause) other than context.Canceled makes the cause the
// failure's description: "stopped: <cause>" (TestStreamStoppedWithCause).
func Stream(ctx context.Context, r io.Reader, opts ...Option) (Result, error) {
	cfg := newConfig(opts)
	d := newDecoder(ctx, cfg)
	started := time.Now().UTC()

	readErr := readAll(ctx, r, d)
	if readErr != nil && ctx.Err() != nil && (errors.Is(readErr, os.ErrDeadlineExceeded) || errors.Is(readErr, ctx.Err())) {
		readErr = ctx.Err()
	}

	o := runEnd{start: started, rc: -1}
	var err error
	switch {
	case readErr != nil && ctx.Err() != nil:
		// Stopped now: the run ends now, not at Ansible's last event.
		err = fmt.Errorf("ansible: stream cancelled: %w", readErr)
		o.err, o.code, o.reason, o.cancelled, o.end = err, FailureInternal, "cancelled", true, time.Now().UTC()
		if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
			// The caller said why it stopped the stream (the tool could not
			// start, it died): that is the run's failure.
			err = fmt.Errorf("ansible: stream stopped: %w: %w", readErr, cause)
			o.err, o.reason = err, "stopped: "+cause.Error()
		}
	case readErr != nil:
		err = fmt.Errorf("ansible: reading the stream: %w", readErr)
		o.err, o.code, o.reason = err, FailureInternal, "the event stream broke off"
	case d.varPrompt != "" && !d.statsSeen:
		err = &VarsPromptError{Var: d.varPrompt}
		o.err, o.code, o.reason = err, FailureInternal, promptReason(d.varPrompt)
	case d.events == 0:
		err = ErrNoEvents
		if d.skipped > 0 {
			last := errorLine(d.output.String())
			if last == "" {
				last = lastLine(d.output.String())
			}
			err = fmt.Errorf("%w (%d lines were not job events: %s)", ErrNoEvents, d.skipped, last)
		}
		o.err, o.code, o.reason = err, FailureInternal, noRecapReason(d)
	case !d.statsSeen:
		err = ErrStatsMissing
		o.err, o.code, o.reason = err, FailureInternal, noRecapReason(d)
	}
	return d.finish(o), err
}

// readAll feeds every line of r to d until io.EOF, an error or the end of
// ctx (see adapter.Config.ReadLines).
func readAll(ctx context.Context, r io.Reader, d *decoder) error {
	return d.cfg.ReadLines(ctx, r, d.handle, func(head []byte) {
		d.skipped++
		d.cfg.Logger.Warn("ansible: line skipped: longer than the limit",
			"limit", d.cfg.MaxLineBytes, "start", d.cfg.Redactor.Value(cleanText(string(head), 200)))
	})
}

func promptReason(name string) string {
	return "the playbook prompts for " + name + " (vars_prompt), which a run cannot answer"
}

func lastLine(s string) string {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			return s[i+1:]
		}
	}
	return s
}
