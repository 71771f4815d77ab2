// The BatchProcessor in this file is a fork of the BatchProcessor of
// go.opentelemetry.io/otel/sdk/log v1.47.0 (sdk/log/batch.go).
//
// It keeps the SDK's defaults and OTEL_BLRP_* variables, its bounded queue
// that OnEmit never blocks on (a full queue overwrites its oldest record),
// its single worker goroutine that owns every exporter call (a queued
// Shutdown before a ForceFlush before an export), and its context
// handling.
//
// It changes the drop accounting: the SDK counts only overwritten records,
// in a warning. Here every record is written down once, exported or lost
// with a reason: the queue (queue.go) knows which records are queued, in
// flight or settled and settles them in the ledger (drops.go: Stats, the
// progress.records.dropped metric, Shutdown's *LostRecordsError, the lost
// records grouped per tenant, trace and reason), and the reporter
// (reporter.go) exports those groups as common/EventsDropped events after
// the next successful export. When Shutdown's context ends, the export in
// progress is cancelled and Shutdown settles what is left itself, so its
// error and Stats are final when it returns.
//
// Also changed: the queue grows up to its bound instead of being allocated
// whole. Left out: the SDK's chunking and timeout wrappers (batches are
// taken at most batch-size records at a time, each export gets the export
// timeout) and its experimental self-observability metrics, which
// progress.records.dropped replaces.

package sdkparts

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/progressotel/progressotel/otelbridge/internal/shutdown"
	"go.opentelemetry.io/otel"
	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// errShutdownDeadline cancels the exports in progress when Shutdown's
// context ends.
var errShutdownDeadline = errors.New("sdkparts: the export was cut at the shutdown deadline")

// BatchProcessor exports records in batches, like the SDK's BatchProcessor,
// and accounts for every record it loses: dropped from a full queue, in a
// failed Export, or left at Shutdown (Stats, the progress.records.dropped
// metric). After the next successful export it exports a
// common/EventsDropped event (progress.EventsDropped) into the same
// stream, one per tenant, trace and reason, with the count and time window
// of the loss. Shutdown returns a *LostRecordsError when records could not
// be flushed or their loss could not be reported. otelbridge.Setup puts one
// in front of every exporter it builds.
type BatchProcessor struct {
	batchConfig
	exp sdklog.Exporter

	q      *queue
	ledger *ledger
	rep    reporter // the worker's, except learn

	stopOnce sync.Once
	stopped  chan struct{} // closed by the first Shutdown
	trigger  chan struct{}
	flushReq chan request
	shutReq  chan request
	done     chan struct{} // closed when the worker has returned

	// cut is cancelled when Shutdown's context ends; every export runs on
	// a context that cut cancels.
	cut       context.Context
	cutExport context.CancelCauseFunc
}

type request struct {
	ctx  context.Context
	resp chan error
}

// NewBatchProcessor returns a BatchProcessor that exports through exp. A
// nil exp exports nowhere and counts nothing as lost.
func NewBatchProcessor(exp sdklog.Exporter, opts ...BatchOption) *BatchProcessor {
	c := newBatchConfig(opts)
	if exp == nil {
		exp = discardExporter{}
	}
	l := newLedger(c.name, c.meter)
	b := &BatchProcessor{
		batchConfig: c, exp: exp,
		q:        newQueue(c.maxQueue, c.batchSize, l),
		ledger:   l,
		stopped:  make(chan struct{}),
		trigger:  make(chan struct{}, 1),
		flushReq: make(chan request),
		shutReq:  make(chan request, 1),
		done:     make(chan struct{}),
	}
	b.cut, b.cutExport = context.WithCancelCause(context.Background())
	go b.run()
	return b
}

// Enabled returns true: the processor filters nothing.
func (b *BatchProcessor) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }

// OnEmit queues a clone of r. It never blocks on I/O: when the queue is
// full the oldest record is dropped and counted. After Shutdown, r is
// counted as lost at shutdown.
func (b *BatchProcessor) OnEmit(_ context.Context, r *sdklog.Record) error {
	if r == nil {
		return nil
	}
	b.rep.learn(r)
	n, accepted, overwrote := b.q.push(r.Clone())
	switch {
	case !accepted:
		b.ledger.observe(DropShutdown, 1)
		return nil
	case overwrote:
		b.ledger.observe(DropQueueFull, 1)
	}
	if n >= b.batchSize {
		b.signal()
	}
	return nil
}

func (b *BatchProcessor) signal() {
	select {
	case b.trigger <- struct{}{}:
	default:
	}
}

// Stats returns this processor's counters. After Shutdown has returned
// they are final: Exported + Dropped is every record OnEmit received.
func (b *BatchProcessor) Stats() DropStats {
	s := b.ledger.stats()
	s.Queued = b.q.len()
	return s
}

func (b *BatchProcessor) run() {
	defer close(b.done)
	timer := time.NewTimer(b.interval)
	defer timer.Stop()
	// Exporters must not retain the slice passed to them, so the worker
	// reuses one buffer for every batch.
	buf := make([]sdklog.Record, b.batchSize)
	for {
		// A queued Shutdown wins over everything, then a ForceFlush, then
		// an export, as in the SDK.
		select {
		case req := <-b.shutReq:
			req.resp <- b.shutdown(req.ctx, buf)
			return
		default:
		}
		select {
		case req := <-b.flushReq:
			req.resp <- b.flush(req.ctx, buf)
			continue
		default:
		}
		select {
		case req := <-b.shutReq:
			req.resp <- b.shutdown(req.ctx, buf)
			return
		case req := <-b.flushReq:
			req.resp <- b.flush(req.ctx, buf)
			continue
		case <-timer.C:
		case <-b.trigger:
		}
		b.exportOne(buf)
		// Since Go 1.23, Reset leaves no stale tick to receive.
		timer.Reset(b.interval)
	}
}

// bounded returns ctx, also cancelled when Shutdown's context ends.
func (b *BatchProcessor) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(b.cut, func() { cancel(context.Cause(b.cut)) })
	return ctx, func() { stop(); cancel(nil) }
}

// exportOne exports one batch with the export timeout. With nothing queued
// but losses unreported, it tries the report alone: its success is the
// sign of recovery.
func (b *BatchProcessor) exportOne(buf []sdklog.Record) {
	ctx, cancel := context.WithTimeout(b.cut, b.timeout)
	defer cancel()
	n, remaining := b.q.take(buf)
	if n == 0 || b.export(ctx, buf[:n]) == nil {
		_ = b.rep.report(ctx, b.exp, b.ledger)
	}
	if remaining >= b.batchSize {
		b.signal()
	}
}

// export sends the batch in flight and settles it.
func (b *BatchProcessor) export(ctx context.Context, batch []sdklog.Record) error {
	err := b.exp.Export(ctx, batch)
	if err != nil {
		otel.Handle(err)
	}
	if reason, ok := b.q.settle(batch, err, b.cut.Err() != nil); ok && reason != "" {
		b.ledger.observe(reason, int64(len(batch)))
	}
	clear(batch)
	return err
}

// drain exports every queued record with ctx, then reports the losses
// when the exporter is healthy (the last export succeeded, or there was
// nothing to export) and flushes the exporter. It stops when ctx is done,
// leaving the rest queued and the exporter unflushed (flushed is false).
// It returns how many records it lost and the first export error.
func (b *BatchProcessor) drain(ctx context.Context, buf []sdklog.Record) (lost int64, err, flushErr error, flushed bool) {
	healthy := true
	for ctx.Err() == nil {
		n, _ := b.q.take(buf)
		if n == 0 {
			break
		}
		ectx, cancel := context.WithTimeout(ctx, b.timeout)
		e := b.export(ectx, buf[:n])
		cancel()
		healthy = e == nil
		if e != nil {
			lost += int64(n)
			if err == nil {
				err = e
			}
		}
	}
	if ctx.Err() != nil {
		return lost, err, nil, false
	}
	if healthy {
		_ = b.rep.report(ctx, b.exp, b.ledger)
	}
	return lost, err, b.exp.ForceFlush(ctx), true
}

func (b *BatchProcessor) flush(ctx context.Context, buf []sdklog.Record) error {
	ctx, cancel := b.bounded(ctx)
	defer cancel()
	lost, _, err, flushed := b.drain(ctx, buf)
	if !flushed {
		err = context.Cause(ctx)
	}
	var lostErr error
	if lost > 0 {
		lostErr = fmt.Errorf("sdkparts: %s: %d log records failed to export during flush", b.label(), lost)
	}
	return errors.Join(err, lostErr)
}

// shutdown is the worker's part of Shutdown: export what it can, report
// what was lost, shut the exporter down, and settle the rest as lost. It
// returns the exporter's errors and the first export error; Shutdown
// builds the LostRecordsError from the ledger.
func (b *BatchProcessor) shutdown(ctx context.Context, buf []sdklog.Record) error {
	// Shutdown's deadline reaches the exports only through cut: an export
	// it ends always finds cut cancelled, and settles as lost at shutdown
	// rather than as a failed export.
	ctx, cancel := b.bounded(context.WithoutCancel(ctx))
	defer cancel()
	_, drainErr, flushErr, _ := b.drain(ctx, buf)
	shutErr := b.exp.Shutdown(ctx)
	b.ledger.observe(DropShutdown, b.q.finish())
	return errors.Join(drainErr, errors.Join(flushErr, shutErr))
}

func (b *BatchProcessor) label() string { return cmp.Or(b.name, "exporter") }

// ForceFlush exports everything queued and flushes the exporter, within
// ctx's deadline. Records still queued when the deadline passes stay queued.
func (b *BatchProcessor) ForceFlush(ctx context.Context) error {
	select {
	case <-b.stopped:
		return nil
	default:
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	resp := make(chan error, 1)
	select {
	case b.flushReq <- request{ctx, resp}:
	case <-b.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-resp:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown exports what it can within ctx's deadline, then shuts the
// exporter down. Later calls return nil.
//
// The export in progress is cancelled shutdown.CancelGrace before ctx's deadline
// (see shutdown.CutContext). When ctx ends first, Shutdown counts every record
// still queued or in flight as lost (DropShutdown) and returns at once, so
// Stats is final on return; an exporter that ignores cancellation is left
// to finish on its own, its records counted as lost. When records could
// not be flushed, or earlier losses could not be reported in the stream,
// the error includes a *LostRecordsError that says how many.
func (b *BatchProcessor) Shutdown(ctx context.Context) error {
	first := false
	b.stopOnce.Do(func() { first = true; close(b.stopped) })
	if !first {
		return nil
	}
	b.q.close()

	cut, cancelCut := shutdown.CutContext(ctx)
	defer cancelCut()
	stop := context.AfterFunc(cut, func() { b.cutExport(errShutdownDeadline) })
	defer stop()
	resp := make(chan error, 1)
	b.shutReq <- request{ctx, resp}
	var err error
	select {
	case err = <-resp:
	case <-ctx.Done():
		select {
		case err = <-resp: // it returned in the same instant
		default:
			b.ledger.observe(DropShutdown, b.q.finish()) // Stats is final on return
			err = fmt.Errorf("sdkparts: %s: the export did not return by the shutdown deadline, %v after its cancellation", b.label(), shutdown.CancelGrace)
		}
	}
	b.cutExport(errShutdownDeadline)

	failed, atEnd := b.q.shutdownLoss()
	unflushed := failed + atEnd
	// Records lost in this shutdown's drain are unflushed, and pending a
	// report that can no longer be made: count them once.
	unreported := max(0, b.ledger.unreported()-failed)
	// The cut ends with ctx, or a grace before its deadline: either way
	// it is the deadline that cut the exports.
	if unflushed > 0 || unreported > 0 {
		cause := cut.Err()
		if cause == nil {
			cause = err
		} else if err != nil {
			cause = errors.Join(cause, err)
		}
		return &LostRecordsError{Exporter: b.name, Unflushed: unflushed, Unreported: unreported, Cause: cause}
	}
	if cut.Err() != nil {
		return errors.Join(cut.Err(), err)
	}
	return err
}

type discardExporter struct{}

func (discardExporter) Export(context.Context, []sdklog.Record) error { return nil }
func (discardExporter) Shutdown(context.Context) error                { return nil }
func (discardExporter) ForceFlush(context.Context) error              { return nil }
