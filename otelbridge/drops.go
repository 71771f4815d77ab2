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
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/progressotel/progressotel/progress"
)

// Reasons a record is lost, written as the "reason" attribute of the
// progress.records.dropped metric and the reason detail of a
// common/EventsDropped event.
const (
	// DropQueueFull: the queue was full, so the oldest queued record was
	// dropped to make room for a new one (the exporter is slower than the
	// driver, or the collector is unreachable).
	DropQueueFull = "queue_full"
	// DropExportFailed: the exporter returned an error for the batch that
	// held the record (collector down, rejected, timed out).
	DropExportFailed = "export_failed"
	// DropShutdown: the record was still queued when Shutdown's deadline
	// passed, or was emitted after Shutdown.
	DropShutdown = "shutdown"
)

// MetricRecordsDropped is the Int64Counter of records lost before export,
// with attributes "reason" (DropQueueFull, DropExportFailed, DropShutdown)
// and "exporter" (the name given by WithExporterName).
const MetricRecordsDropped = "progress.records.dropped"

// Defaults of the batch processor; the OTEL_BLRP_* variables and the
// BatchOptions override them, as for the SDK's BatchProcessor.
const (
	DefaultMaxQueueSize       = 2048
	DefaultExportInterval     = time.Second
	DefaultExportTimeout      = 30 * time.Second
	DefaultExportMaxBatchSize = 512
)

// maxDropGroups bounds the distinct (tenant, trace, reason) groups of
// unreported drops. Past it, drops are counted in one group with no tenant
// and no trace, so the count stays exact and the memory bounded.
const maxDropGroups = 256

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

type dropKey struct {
	tenant string
	trace  trace.TraceID
	reason string
}

type dropGroup struct {
	count        int64
	since, until time.Time
	span         trace.SpanID
	flags        trace.TraceFlags
	tracectx     []attribute.KeyValue
}

// counters are kept per processor and summed over all processors.
type counters struct {
	exported, queueFull, exportFailed, shutdown, reported atomic.Int64
}

var global counters

// DropStats counts what BatchProcessors did with the records they received.
type DropStats struct {
	// Queued records are waiting for export now.
	Queued int64
	// Exported records were accepted by the exporter.
	Exported int64
	// Dropped is every record lost: QueueFull + ExportFailed + Shutdown.
	Dropped      int64
	QueueFull    int64
	ExportFailed int64
	Shutdown     int64
	// Reported is how many of the Dropped records are covered by a
	// common/EventsDropped event that was exported.
	Reported int64
}

func (c *counters) stats() DropStats {
	s := DropStats{
		Exported: c.exported.Load(), QueueFull: c.queueFull.Load(),
		ExportFailed: c.exportFailed.Load(), Shutdown: c.shutdown.Load(), Reported: c.reported.Load(),
	}
	s.Dropped = s.QueueFull + s.ExportFailed + s.Shutdown
	return s
}

// live holds the processors not yet shut down, for the Queued total. The
// hot path counts nothing shared: the queue length is read under each
// processor's own lock when asked.
var live sync.Map // *BatchProcessor -> struct{}

// Stats sums the counters of every BatchProcessor of the process since it
// started, including those Setup built. Queued is the sum over the
// processors not yet shut down.
func Stats() DropStats {
	s := global.stats()
	live.Range(func(k, _ any) bool {
		s.Queued += k.(*BatchProcessor).queued()
		return true
	})
	return s
}

// Stats returns this processor's counters.
func (b *BatchProcessor) Stats() DropStats {
	s := b.c.stats()
	s.Queued = b.queued()
	return s
}

func (b *BatchProcessor) queued() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return int64(b.n)
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

// account adds one lost record to its group; the caller holds mu and calls
// count afterwards.
func (b *BatchProcessor) account(r *sdklog.Record, reason string, now time.Time) {
	k := dropKey{reason: reason}
	var tracectx []attribute.KeyValue
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		switch key := string(kv.Key); {
		case key == progress.AttrTenant:
			k.tenant = kv.Value.AsString()
		case strings.HasPrefix(key, progress.TraceCtxPrefix):
			if key == progress.TraceCtxPrefix+"tenantid" && k.tenant == "" {
				k.tenant = kv.Value.AsString()
			}
			tracectx = append(tracectx, kv)
		}
		return true
	})
	k.trace = r.TraceID()
	g := b.pending[k]
	if g == nil {
		if len(b.pending) >= maxDropGroups {
			k = dropKey{reason: reason}
			tracectx = nil
			g = b.pending[k]
		}
		if g == nil {
			g = &dropGroup{since: now, span: r.SpanID(), flags: r.TraceFlags(), tracectx: tracectx}
			if !k.trace.IsValid() && k.tenant == "" {
				g.tracectx = nil // an aggregate group speaks for no request
			}
			b.pending[k] = g
		}
	}
	g.count++
	g.until = now
}

// count adds n lost records to the counters and the metric.
func (b *BatchProcessor) count(reason string, n int64) {
	if n <= 0 {
		return
	}
	var attrs metric.AddOption
	switch reason {
	case DropQueueFull:
		b.c.queueFull.Add(n)
		global.queueFull.Add(n)
		attrs = b.attrs.queueFull
	case DropExportFailed:
		b.c.exportFailed.Add(n)
		global.exportFailed.Add(n)
		attrs = b.attrs.exportFailed
	default:
		b.c.shutdown.Add(n)
		global.shutdown.Add(n)
		attrs = b.attrs.shutdown
	}
	b.dropped.Add(context.Background(), n, attrs)
}

// dropAttrs are the metric's attribute sets, built once: a full queue
// counts on the caller's path.
type dropAttrs struct{ queueFull, exportFailed, shutdown metric.AddOption }

func newDropAttrs(exporter string) dropAttrs {
	set := func(reason string) metric.AddOption {
		return metric.WithAttributeSet(attribute.NewSet(
			attribute.String("reason", reason), attribute.String("exporter", exporter)))
	}
	return dropAttrs{set(DropQueueFull), set(DropExportFailed), set(DropShutdown)}
}

// lose accounts the batch in flight that the exporter did not take.
func (b *BatchProcessor) lose(recs []sdklog.Record, reason string) {
	if len(recs) == 0 {
		return
	}
	now := time.Now()
	b.mu.Lock()
	for i := range recs {
		b.account(&recs[i], reason, now)
	}
	b.inflight.Store(0) // lose is only called for the batch in flight
	b.mu.Unlock()
	b.count(reason, int64(len(recs)))
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

// report exports one common/EventsDropped record per pending group. A
// failed report keeps its groups pending for the next attempt.
func (b *BatchProcessor) report(ctx context.Context) {
	b.mu.Lock()
	if len(b.pending) == 0 {
		b.mu.Unlock()
		return
	}
	groups := b.pending
	b.pending = map[dropKey]*dropGroup{}
	b.mu.Unlock()

	recs, total := b.reportRecords(groups)
	if err := b.exp.Export(ctx, recs); err != nil {
		otel.Handle(err)
		b.mu.Lock()
		for k, g := range groups {
			if p := b.pending[k]; p != nil {
				p.count += g.count
				p.since = g.since
			} else {
				b.pending[k] = g
			}
		}
		b.mu.Unlock()
		return
	}
	b.c.reported.Add(total)
	global.reported.Add(total)
}

func (b *BatchProcessor) reportRecords(groups map[dropKey]*dropGroup) ([]sdklog.Record, int64) {
	if b.reporter == nil {
		b.sink = &reportSink{}
		popts := []sdklog.LoggerProviderOption{sdklog.WithProcessor(b.sink)}
		if res := b.res.Load(); res != nil {
			popts = append(popts, sdklog.WithResource(res))
		}
		// The reports carry no progress.sequence: they are not part of any
		// operation's sequence, they account for its gaps.
		b.reporter = progress.NewRecorder(
			progress.WithLoggerProvider(sdklog.NewLoggerProvider(popts...)),
			progress.WithoutSequence(),
			progress.WithMeterProvider(metricnoop.NewMeterProvider()))
	}
	var total int64
	b.sink.recs = b.sink.recs[:0]
	for k, g := range groups {
		total += g.count
		ctx := context.Background()
		if k.trace.IsValid() {
			ctx = trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
				TraceID: k.trace, SpanID: g.span, TraceFlags: g.flags, Remote: true,
			}))
		}
		evt := progress.EventsDropped(g.count, g.since, g.until, k.reason)
		if k.tenant != "" {
			evt.Scope = map[string]string{"tenant": k.tenant}
		}
		before := len(b.sink.recs)
		_ = b.reporter.Record(ctx, evt)
		if len(b.sink.recs) > before && len(g.tracectx) > 0 {
			b.sink.recs[len(b.sink.recs)-1].AddAttributes(g.tracectx...)
		}
	}
	return b.sink.recs, total
}

// reportSink captures the records of the reporter's private provider.
type reportSink struct {
	recs []sdklog.Record
}

func (s *reportSink) OnEmit(_ context.Context, r *sdklog.Record) error {
	s.recs = append(s.recs, r.Clone())
	return nil
}
func (s *reportSink) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (s *reportSink) Shutdown(context.Context) error                         { return nil }
func (s *reportSink) ForceFlush(context.Context) error                       { return nil }

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

// LostRecordsError reports records a BatchProcessor could not deliver by
// the end of Shutdown.
type LostRecordsError struct {
	Exporter string
	// Unflushed records were queued or in flight at shutdown and not
	// exported.
	Unflushed int64
	// Unreported records were lost earlier and no common/EventsDropped
	// event for them reached the exporter.
	Unreported int64
	// Cause is the context's error when the deadline passed, else the
	// first export error.
	Cause error
}

func (e *LostRecordsError) Error() string {
	name := e.Exporter
	if name == "" {
		name = "exporter"
	}
	s := fmt.Sprintf("otelbridge: %s: %d log records could not be flushed at shutdown", name, e.Unflushed)
	if e.Unreported > 0 {
		s += fmt.Sprintf(", and the loss of %d earlier records was never reported in the stream", e.Unreported)
	}
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns Cause, so errors.Is(err, context.DeadlineExceeded) works.
func (e *LostRecordsError) Unwrap() error { return e.Cause }

type discardExporter struct{}

func (discardExporter) Export(context.Context, []sdklog.Record) error { return nil }
func (discardExporter) Shutdown(context.Context) error                { return nil }
func (discardExporter) ForceFlush(context.Context) error              { return nil }

// reconnectParams cap gRPC's reconnect backoff at 5 seconds (gRPC's default
// grows to 120 s), so that logs and spans flow again soon after a collector
// comes back.
var reconnectParams = grpc.ConnectParams{
	Backoff:           backoff.Config{BaseDelay: time.Second, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 5 * time.Second},
	MinConnectTimeout: 10 * time.Second,
}

func grpcReconnect() otlploggrpc.Option {
	return otlploggrpc.WithDialOption(grpc.WithConnectParams(reconnectParams))
}
