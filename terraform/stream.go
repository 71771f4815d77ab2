package terraform

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"time"
)

// Stream reads the -json output of a plan, apply, destroy or refresh that
// the driver runs its own way, and records it live as Run does, on the
// messages' @timestamp.
//
// Stream returns at the end of r, or when ctx is done: at once when r has
// a SetReadDeadline method (an *os.File pipe, a net.Conn), else after the
// read under way returns (close r to end it). The error is nil when the
// stream reported its end and no error, else an *OperationError, which
// wraps the cause beyond the tool's report when there is one:
// ErrNoMessages (no message at all), ErrIncomplete (no final message: the
// stream was cut, or the tool died), ErrInterrupted (the tool reported an
// interrupt), ctx's error, or the read error. The Result holds what was
// reported in every case.
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
		// Only the tool's own last word says a stream is whole.
		o.cause = ErrIncomplete
	}
	return d.finish(o)
}

// readAll feeds every line of r to d until the end of r or of ctx, with
// the adapter's heartbeat running meanwhile.
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
