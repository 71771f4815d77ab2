package terraform

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"time"
)

// Stream reads the machine-readable UI (the -json output) of a plan,
// apply, destroy or refresh that the driver runs its own way, and records
// it live, each message when it is read, as progress events inside a
// command span (a child of the span in ctx) with a child span per resource
// operation. See the package documentation for the events and spans.
//
// Times come from the messages' @timestamp: the command span and the
// common events run from the first message to the last. Lines that are not
// messages (plain text, malformed JSON, lines longer than the limit) are
// skipped, counted in Result.SkippedLines and logged; they never stop the
// stream.
//
// Stream returns at the end of r, or when ctx is done: at once when r has
// a SetReadDeadline method (an *os.File pipe, a net.Conn), else after the
// read under way returns (close r to end it). The error is nil when the
// stream reported its end and no error. Otherwise it is an
// *OperationError, which wraps the cause when there is one beyond the
// tool's report:
//   - the tool reported error diagnostics or errored resources;
//   - ErrNoMessages: the stream held no message (empty, plain text,
//     binary);
//   - ErrIncomplete: the stream ended before the tool's own final
//     message (see Result and the package documentation): it was cut, or
//     the tool died;
//   - ErrInterrupted: the tool reported an interrupt;
//   - ctx's error, or the read error.
//
// The Result holds what was reported in every case, and every stream is
// reported as common/OperationStarted then common/OperationCompleted or,
// exactly when the error is not nil, common/OperationFailed.
func Stream(ctx context.Context, r io.Reader, opts ...Option) (Result, error) {
	cfg := newConfig(opts)
	op := cmp.Or(cfg.Operation, "terraform")
	name := "terraform"
	if op != name {
		name += " " + op
	}
	d := newDecoder(ctx, cfg, op, name)
	readErr := readAll(ctx, r, d)

	end := d.last
	if end.IsZero() {
		end = time.Now()
	}
	o := outcome{end: end, exit: noExit}
	switch {
	case ctx.Err() != nil:
		o.cause = ctxCause(ctx)
	case readErr != nil:
		o.cause = fmt.Errorf("terraform: reading the stream: %w", readErr)
	case d.res.Messages == 0:
		o.cause = ErrNoMessages
	case !d.reportedEnd():
		// Only the tool's own last word says a stream is whole: without a
		// process, nothing else can.
		o.cause = ErrIncomplete
	}
	return d.finish(o)
}

// readAll feeds every line of r to d until the end of r or until ctx is
// done (see adapter.Config.ReadLines), with the adapter's heartbeat
// running meanwhile.
func readAll(ctx context.Context, r io.Reader, d *decoder) error {
	stop := d.startHeartbeat()
	defer stop()
	return d.cfg.ReadLines(ctx, r,
		func(line []byte) { d.locked(func() { d.handle(line) }) },
		func([]byte) { d.locked(d.skipTooLong) })
}

func (d *decoder) locked(f func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f()
}

// ctxCause is ctx's error, with its cause when one was given: errors.Is
// matches context.Canceled either way.
func ctxCause(ctx context.Context) error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if cause == nil || cause == err {
		return err
	}
	return fmt.Errorf("%w: %w", err, cause)
}
