package otelbridge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/progressotel/progressotel/progress"
)

// Defaults of the batch processor; the OTEL_BLRP_* variables and the
// BatchOptions override them, as for the SDK's BatchProcessor.
const (
	DefaultMaxQueueSize       = 2048
	DefaultExportInterval     = time.Second
	DefaultExportTimeout      = 30 * time.Second
	DefaultExportMaxBatchSize = 512
)

// BatchOption configures NewBatchProcessor.
type BatchOption func(*batchConfig)

type batchConfig struct {
	maxQueue  int
	interval  time.Duration
	timeout   time.Duration
	batchSize int
	name      string
	meter     metric.MeterProvider
}

// WithMaxQueueSize bounds the queue (default 2048, OTEL_BLRP_MAX_QUEUE_SIZE).
func WithMaxQueueSize(n int) BatchOption { return func(c *batchConfig) { c.maxQueue = n } }

// WithExportInterval sets the longest wait between exports (default 1s,
// OTEL_BLRP_SCHEDULE_DELAY in milliseconds).
func WithExportInterval(d time.Duration) BatchOption {
	return func(c *batchConfig) { c.interval = d }
}

// WithExportTimeout bounds one periodic export (default 30s,
// OTEL_BLRP_EXPORT_TIMEOUT in milliseconds).
func WithExportTimeout(d time.Duration) BatchOption { return func(c *batchConfig) { c.timeout = d } }

// WithExportMaxBatchSize caps the records of one export (default 512,
// OTEL_BLRP_MAX_EXPORT_BATCH_SIZE; never more than the queue size).
func WithExportMaxBatchSize(n int) BatchOption { return func(c *batchConfig) { c.batchSize = n } }

// WithExporterName names the exporter in the progress.records.dropped
// metric ("otlp", "json", ...).
func WithExporterName(name string) BatchOption { return func(c *batchConfig) { c.name = name } }

// WithDropMeterProvider counts drops through p instead of the global
// MeterProvider.
func WithDropMeterProvider(p metric.MeterProvider) BatchOption {
	return func(c *batchConfig) { c.meter = p }
}

func newBatchConfig(opts []BatchOption) batchConfig {
	c := batchConfig{
		maxQueue:  envInt("OTEL_BLRP_MAX_QUEUE_SIZE", DefaultMaxQueueSize),
		interval:  envMillis("OTEL_BLRP_SCHEDULE_DELAY", DefaultExportInterval),
		timeout:   envMillis("OTEL_BLRP_EXPORT_TIMEOUT", DefaultExportTimeout),
		batchSize: envInt("OTEL_BLRP_MAX_EXPORT_BATCH_SIZE", DefaultExportMaxBatchSize),
	}
	for _, o := range opts {
		o(&c)
	}
	if c.maxQueue <= 0 {
		c.maxQueue = DefaultMaxQueueSize
	}
	if c.interval <= 0 {
		c.interval = DefaultExportInterval
	}
	if c.timeout <= 0 {
		c.timeout = DefaultExportTimeout
	}
	if c.batchSize <= 0 {
		c.batchSize = DefaultExportMaxBatchSize
	}
	c.batchSize = min(c.batchSize, c.maxQueue)
	if c.meter == nil {
		c.meter = otel.GetMeterProvider()
	}
	return c
}

func envInt(key string, def int) int {
	if v, err := strconv.Atoi(strings.TrimSpace(os.Getenv(key))); err == nil && v > 0 {
		return v
	}
	return def
}

func envMillis(key string, def time.Duration) time.Duration {
	if v, err := strconv.Atoi(strings.TrimSpace(os.Getenv(key))); err == nil && v > 0 {
		return time.Duration(v) * time.Millisecond
	}
	return def
}

// BatchProcessor exports records in batches, like the SDK's BatchProcessor,
// and accounts for every record it loses. Setup puts one in front of every
// exporter it builds.
//
// Semantics kept from the SDK: the queue is bounded (WithMaxQueueSize);
// OnEmit never blocks on I/O, it clones the record into the queue and, when
// the queue is full, drops the oldest queued record; one goroutine owns
// every Export call, exporting every interval or as soon as a batch is
// full; ForceFlush and Shutdown honour their context's deadline.
//
// What it adds: a record dropped from a full queue, in a failed Export, or
// left queued at Shutdown is counted (Stats, the package Stats, and the
// progress.records.dropped metric). After the next successful export, the
// processor exports a common/EventsDropped event (progress.EventsDropped)
// into the same stream, one per tenant, trace and reason, with the count
// and the time window of the loss, so that whoever reads the stream knows
// what it is missing. Shutdown returns a *LostRecordsError when records
// could not be flushed or their loss could not be reported.
type BatchProcessor struct {
	exp       sdklog.Exporter
	name      string
	batchSize int
	maxQueue  int
	interval  time.Duration
	timeout   time.Duration

	mu      sync.Mutex
	ring    []sdklog.Record // grows up to maxQueue
	head, n int
	stopped bool
	pending map[dropKey]*dropGroup // lost and not yet reported

	res atomic.Pointer[resource.Resource] // learned from the first record

	trigger  chan struct{}
	flushReq chan request
	shutReq  chan request
	done     chan struct{}
	// ctx is cancelled when Shutdown's deadline passes, so that an export
	// in progress does not outlive it.
	ctx    context.Context
	cancel context.CancelFunc

	inflight atomic.Int64
	c        counters
	dropped  metric.Int64Counter
	attrs    dropAttrs

	// Owned by the worker goroutine: builds the EventsDropped records.
	reporter *progress.Recorder
	sink     *reportSink
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
	b := &BatchProcessor{
		exp: exp, name: c.name, batchSize: c.batchSize, maxQueue: c.maxQueue,
		interval: c.interval, timeout: c.timeout,
		ring:     make([]sdklog.Record, min(c.maxQueue, c.batchSize)),
		pending:  map[dropKey]*dropGroup{},
		trigger:  make(chan struct{}, 1),
		flushReq: make(chan request),
		shutReq:  make(chan request, 1),
		done:     make(chan struct{}),
	}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.attrs = newDropAttrs(c.name)
	var err error
	b.dropped, err = c.meter.Meter("github.com/progressotel/progressotel/otelbridge",
		metric.WithInstrumentationVersion(progress.Version)).Int64Counter(MetricRecordsDropped,
		metric.WithDescription("Log records lost before export: queue full, export failed, or left at shutdown."),
		metric.WithUnit("{record}"))
	if err != nil {
		otel.Handle(err)
		b.dropped, _ = metricnoop.NewMeterProvider().Meter("").Int64Counter(MetricRecordsDropped)
	}
	live.Store(b, struct{}{})
	go b.run()
	return b
}

// Enabled returns true: the processor filters nothing.
func (b *BatchProcessor) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }

// OnEmit queues a clone of r. It never blocks on I/O: when the queue is
// full the oldest record is dropped and counted.
func (b *BatchProcessor) OnEmit(_ context.Context, r *sdklog.Record) error {
	if r == nil {
		return nil
	}
	if b.res.Load() == nil {
		if res := r.Resource(); res != nil {
			b.res.CompareAndSwap(nil, res)
		}
	}
	rec := r.Clone()
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		b.count(DropShutdown, 1)
		return nil
	}
	full := false
	if b.n == len(b.ring) && len(b.ring) < b.maxQueue {
		b.grow()
	}
	if b.n == len(b.ring) {
		// Overwrite the oldest, as the SDK does: the newest progress is the
		// most useful to whoever watches, and the gap is reported.
		b.account(&b.ring[b.head], DropQueueFull, time.Now())
		b.ring[b.head] = rec
		b.head = (b.head + 1) % len(b.ring)
		full = true
	} else {
		b.ring[(b.head+b.n)%len(b.ring)] = rec
		b.n++
	}
	n := b.n
	b.mu.Unlock()
	if full {
		b.count(DropQueueFull, 1)
	}
	if n >= b.batchSize {
		select {
		case b.trigger <- struct{}{}:
		default:
		}
	}
	return nil
}

// grow doubles the ring up to maxQueue; the caller holds mu.
func (b *BatchProcessor) grow() {
	next := make([]sdklog.Record, min(2*len(b.ring), b.maxQueue))
	for i := 0; i < b.n; i++ {
		next[i] = b.ring[(b.head+i)%len(b.ring)]
	}
	b.ring, b.head = next, 0
}

// dequeue moves up to len(buf) records into buf; the caller then owns them
// as in flight.
func (b *BatchProcessor) dequeue(buf []sdklog.Record) (n, remaining int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n = min(len(buf), b.n)
	for i := 0; i < n; i++ {
		buf[i] = b.ring[b.head]
		b.ring[b.head] = sdklog.Record{}
		b.head = (b.head + 1) % len(b.ring)
	}
	b.n -= n
	b.inflight.Store(int64(n))
	return n, b.n
}

func (b *BatchProcessor) run() {
	timer := time.NewTimer(b.interval)
	defer timer.Stop()
	buf := make([]sdklog.Record, b.batchSize)
	for {
		select {
		case req := <-b.shutReq:
			err := b.shutdown(req.ctx, buf)
			close(b.done)
			req.resp <- err
			return
		default:
		}
		select {
		case req := <-b.shutReq:
			err := b.shutdown(req.ctx, buf)
			close(b.done)
			req.resp <- err
			return
		case req := <-b.flushReq:
			req.resp <- b.flush(req.ctx, buf)
		case <-timer.C:
			b.exportOne(buf)
			timer.Reset(b.interval)
		case <-b.trigger:
			b.exportOne(buf)
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
			timer.Reset(b.interval)
		}
	}
}

// exportOne exports one batch with the export timeout. With nothing queued
// but losses unreported, it tries the report alone: its success is the
// sign of recovery.
func (b *BatchProcessor) exportOne(buf []sdklog.Record) {
	ctx, cancel := context.WithTimeout(b.ctx, b.timeout)
	defer cancel()
	n, remaining := b.dequeue(buf)
	if n == 0 {
		b.report(ctx)
		return
	}
	if b.export(ctx, buf[:n]) == nil {
		b.report(ctx)
	}
	if remaining >= b.batchSize {
		select {
		case b.trigger <- struct{}{}:
		default:
		}
	}
}

// export sends recs and accounts the outcome.
func (b *BatchProcessor) export(ctx context.Context, recs []sdklog.Record) error {
	err := b.exp.Export(ctx, recs)
	if err != nil {
		otel.Handle(err)
		b.lose(recs, DropExportFailed)
	} else {
		// Settled under mu, so that Shutdown's snapshot is consistent.
		b.mu.Lock()
		b.c.exported.Add(int64(len(recs)))
		global.exported.Add(int64(len(recs)))
		b.inflight.Store(0)
		b.mu.Unlock()
	}
	clear(recs)
	return err
}

// drain exports every queued record with ctx. It stops when ctx is done,
// leaving the rest queued. It returns how many records it lost, the first
// export error, and whether the exporter is healthy: the last export
// succeeded, or there was nothing to export.
func (b *BatchProcessor) drain(ctx context.Context, buf []sdklog.Record) (lost int64, err error, healthy bool) {
	healthy = true
	for ctx.Err() == nil {
		n, _ := b.dequeue(buf)
		if n == 0 {
			break
		}
		e := b.export(ctx, buf[:n])
		healthy = e == nil
		if e != nil {
			lost += int64(n)
			if err == nil {
				err = e
			}
		}
	}
	return lost, err, healthy
}

func (b *BatchProcessor) flush(ctx context.Context, buf []sdklog.Record) error {
	lost, _, healthy := b.drain(ctx, buf)
	var errs []error
	if ctx.Err() != nil {
		errs = append(errs, ctx.Err())
	} else {
		if healthy {
			b.report(ctx)
		}
		errs = append(errs, b.exp.ForceFlush(ctx))
	}
	if lost > 0 {
		errs = append(errs, fmt.Errorf("otelbridge: %s: %d log records failed to export during flush", b.label(), lost))
	}
	return errors.Join(errs...)
}

func (b *BatchProcessor) shutdown(ctx context.Context, buf []sdklog.Record) error {
	drained, drainErr, healthy := b.drain(ctx, buf)
	lost := drained
	// Whatever is still queued can no longer be exported.
	b.mu.Lock()
	left := int64(b.n)
	for b.n > 0 {
		b.ring[b.head] = sdklog.Record{}
		b.head = (b.head + 1) % len(b.ring)
		b.n--
	}
	b.mu.Unlock()
	b.count(DropShutdown, left)
	lost += left

	var errs []error
	if ctx.Err() == nil {
		if healthy {
			b.report(ctx)
		}
		errs = append(errs, b.exp.ForceFlush(ctx))
	}
	errs = append(errs, b.exp.Shutdown(ctx))
	b.mu.Lock()
	var unreported int64
	for _, g := range b.pending {
		unreported += g.count
	}
	b.mu.Unlock()
	// Records lost in the drain above are pending too (when their report
	// failed) but already counted as unflushed.
	unreported = max(0, unreported-drained)
	if lost > 0 || unreported > 0 {
		cause := ctx.Err()
		if cause == nil {
			cause = drainErr
		}
		errs = append(errs, &LostRecordsError{Exporter: b.name, Unflushed: lost, Unreported: unreported, Cause: cause})
	} else if ctx.Err() != nil {
		errs = append(errs, ctx.Err())
	}
	return errors.Join(errs...)
}

func (b *BatchProcessor) label() string {
	if b.name == "" {
		return "exporter"
	}
	return b.name
}

// ForceFlush exports everything queued and flushes the exporter, within
// ctx's deadline. Records still queued when the deadline passes stay queued.
func (b *BatchProcessor) ForceFlush(ctx context.Context) error {
	b.mu.Lock()
	stopped := b.stopped
	b.mu.Unlock()
	if stopped {
		return nil
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
// exporter down. When records could not be flushed, or were lost earlier
// and their loss could not be reported in the stream, the error includes a
// *LostRecordsError that says how many. Later calls return nil.
func (b *BatchProcessor) Shutdown(ctx context.Context) error {
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		return nil
	}
	b.stopped = true
	live.Delete(b)
	// What is not yet settled (exported or counted lost) now, less what
	// gets exported from here on, is what this shutdown fails to flush.
	unsettled := int64(b.n) + b.inflight.Load()
	exportedBefore := b.c.exported.Load()
	b.mu.Unlock()

	// An export in progress runs on b.ctx: cut it when the deadline passes.
	stop := context.AfterFunc(ctx, b.cancel)
	defer stop()
	resp := make(chan error, 1)
	b.shutReq <- request{ctx, resp}
	select {
	case err := <-resp:
		b.cancel()
		return err
	case <-ctx.Done():
		select {
		case err := <-resp:
			return err
		default:
		}
		// The exporter does not honour the deadline: answer with what is
		// known now; the worker counts the rest when the exporter returns.
		left := max(0, unsettled-(b.c.exported.Load()-exportedBefore))
		return &LostRecordsError{Exporter: b.name, Unflushed: left, Cause: ctx.Err()}
	}
}

type discardExporter struct{}

func (discardExporter) Export(context.Context, []sdklog.Record) error { return nil }
func (discardExporter) Shutdown(context.Context) error                { return nil }
func (discardExporter) ForceFlush(context.Context) error              { return nil }
