package ansible

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Stream decodes an ansible-runner job-event stream from r, one JSON event
// per line as `ansible-runner run --json` prints it (the AWX job-event
// format), and records each event as it reads it, inside the playbook →
// play → task → host spans under the span in ctx: for drivers that run
// Ansible their own way. Lines that are not job events are skipped, counted
// in Result.SkippedLines and logged (see adapter.WithLogger). Stream reads until
// io.EOF, a read error or the end of ctx, and does not close r; when ctx
// ends while a Read is blocked, it returns at once only if r has a
// SetReadDeadline method (pipes, network connections).
//
// The error is nil for a stream that ended with Ansible's recap, whatever
// the playbook's outcome (see Result.OK). Otherwise it is ctx's error, the
// read error, a *VarsPromptError, ErrNoEvents, or ErrStatsMissing; the
// Result holds what was decoded in every case. Every stream is reported as
// common/OperationStarted then common/OperationCompleted or
// common/OperationFailed, a stream that ends before Ansible's recap with a
// description that says so (see the package documentation). A ctx
// cancelled with a cause other than context.Canceled makes it the
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
	switch {
	case readErr != nil && ctx.Err() != nil:
		// Stopped now: the run ends now, not at Ansible's last event.
		o.err = fmt.Errorf("ansible: stream cancelled: %w", readErr)
		o.reason, o.cancelled, o.end = "cancelled", true, time.Now().UTC()
		if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
			// The caller said why it stopped the stream (the tool could not
			// start, it died): that is the run's failure.
			// It failed, it was not cancelled: what it cut short has no end.
			o.err = fmt.Errorf("ansible: stream stopped: %w: %w", readErr, cause)
			o.reason, o.cancelled, o.broken = "stopped: "+cause.Error(), false, true
		}
	case readErr != nil:
		o.err, o.reason = fmt.Errorf("ansible: reading the stream: %w", readErr), "the event stream broke off"
	case d.varPrompt != "" && !d.statsSeen:
		o.err, o.reason = &VarsPromptError{Var: d.varPrompt}, promptReason(d.varPrompt)
	case d.res.Events == 0:
		o.err, o.reason = ErrNoEvents, noRecapReason(d)
		if d.res.SkippedLines > 0 {
			last := cmp.Or(errorLine(d.output.String()), lastLine(d.output.String()))
			o.err = fmt.Errorf("%w (%d lines were not job events: %s)", ErrNoEvents, d.res.SkippedLines, last)
		}
	case d.errorStop():
		o.err = &PlaybookError{Playbook: d.pbName, Reason: d.ansibleErr, Output: d.output.String(), Err: ErrStatsMissing}
		o.reason = d.errorStopReason()
	case !d.statsSeen:
		o.err, o.reason = ErrStatsMissing, noRecapReason(d)
	}
	return d.finish(o), o.err
}

// readAll feeds every line of r to d until io.EOF, an error or the end of
// ctx (see adapter.Config.ReadLines).
func readAll(ctx context.Context, r io.Reader, d *decoder) error {
	return d.cfg.ReadLines(ctx, r, d.handle, func(head []byte) {
		d.res.SkippedLines++
		d.cfg.Logger.Warn("ansible: line skipped: longer than the limit",
			"limit", d.cfg.MaxLineBytes, "start", d.cfg.Redactor.Value(cleanText(string(head), 200)))
	})
}

func promptReason(name string) string {
	return "the playbook prompts for " + name + " (vars_prompt), which a run cannot answer"
}

// lastLine is the last line of s.
func lastLine(s string) string { return s[strings.LastIndexByte(s, '\n')+1:] }
