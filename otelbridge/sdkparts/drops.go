package otelbridge

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/trace"

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

// maxDropGroups bounds the distinct (tenant, trace, reason) groups of
// unreported drops. Past it, drops are counted in one group with no tenant
// and no trace, so the count stays exact and the memory bounded.
const maxDropGroups = 256

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
