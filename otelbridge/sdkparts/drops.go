package sdkparts

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/progress/wire"
	"github.com/progressotel/progressotel/tncomessage"
)

// Reasons a record is lost, written as the "reason" attribute of the
// progress.records.dropped metric and the reason detail of a
// common/EventsDropped event.
const (
	// DropQueueFull: the queue was full, so its oldest record was dropped
	// (the exporter is slower than the driver, or the collector is down).
	DropQueueFull = "queue_full"
	// DropExportFailed: the exporter returned an error for the batch that
	// held the record (collector down, rejected, timed out).
	DropExportFailed = "export_failed"
	// DropShutdown: the record was still queued or being exported when
	// Shutdown's context ended, or it was emitted after Shutdown.
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

// ledger writes down what became of every record a BatchProcessor
// received, exported or lost with a reason, in the only counters (Stats,
// the Shutdown error and the reports read them), and keeps lost records in
// groups per (tenant, trace, reason) until a report for them is exported.
type ledger struct {
	exported, reported                atomic.Int64
	queueFull, exportFailed, shutdown lossCount

	mu      sync.Mutex
	pending map[dropKey]*dropGroup // lost and not yet reported

	metric metric.Int64Counter
}

// lossCount counts the records lost for one reason; attrs are the metric's
// attributes for it, built once: a full queue counts on the caller's path.
type lossCount struct {
	atomic.Int64
	attrs metric.AddOption
}

func newLedger(exporter string, mp metric.MeterProvider) *ledger {
	l := &ledger{pending: map[dropKey]*dropGroup{}}
	for _, reason := range []string{DropQueueFull, DropExportFailed, DropShutdown} {
		l.counter(reason).attrs = metric.WithAttributeSet(attribute.NewSet(
			attribute.String("reason", reason), attribute.String("exporter", exporter)))
	}
	var err error
	l.metric, err = mp.Meter(meterName, metric.WithInstrumentationVersion(wire.ScopeVersion)).Int64Counter(MetricRecordsDropped,
		metric.WithDescription("Log records lost before export: queue full, export failed, or left at shutdown."),
		metric.WithUnit("{record}"))
	if err != nil {
		otel.Handle(err)
		l.metric, _ = metricnoop.NewMeterProvider().Meter("").Int64Counter(MetricRecordsDropped)
	}
	return l
}

// meterName is the instrumentation scope of the progress.records.dropped
// metric.
const meterName = "github.com/progressotel/progressotel/otelbridge/sdkparts"

// DropStats counts what a BatchProcessor did with the records it received.
// Every record received is, at any time, queued, in flight, exported or
// dropped; after Shutdown returns, only the last two.
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

// Add returns the sum of s and o, for a total over several processors.
func (s DropStats) Add(o DropStats) DropStats {
	return DropStats{
		Queued: s.Queued + o.Queued, Exported: s.Exported + o.Exported, Dropped: s.Dropped + o.Dropped,
		QueueFull: s.QueueFull + o.QueueFull, ExportFailed: s.ExportFailed + o.ExportFailed,
		Shutdown: s.Shutdown + o.Shutdown, Reported: s.Reported + o.Reported,
	}
}

func (l *ledger) stats() DropStats {
	s := DropStats{
		Exported: l.exported.Load(), QueueFull: l.queueFull.Load(),
		ExportFailed: l.exportFailed.Load(), Shutdown: l.shutdown.Load(), Reported: l.reported.Load(),
	}
	s.Dropped = s.QueueFull + s.ExportFailed + s.Shutdown
	return s
}

// counter returns reason's count.
func (l *ledger) counter(reason string) *lossCount {
	switch reason {
	case DropQueueFull:
		return &l.queueFull
	case DropExportFailed:
		return &l.exportFailed
	}
	return &l.shutdown
}

// add counts n records lost for reason, without a group (records lost at
// shutdown can no longer be reported in the stream).
func (l *ledger) add(reason string, n int64) {
	l.counter(reason).Add(n)
}

// observe adds n lost records to the progress.records.dropped metric.
func (l *ledger) observe(reason string, n int64) {
	if n > 0 {
		l.metric.Add(context.Background(), n, l.counter(reason).attrs)
	}
}

// takePending hands the unreported groups to the reporter.
func (l *ledger) takePending() map[dropKey]*dropGroup {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pending) == 0 {
		return nil
	}
	groups := l.pending
	l.pending = map[dropKey]*dropGroup{}
	return groups
}

// settleReport writes down the outcome of a report of groups: reported,
// or pending again (merged with what was lost meanwhile) for the next
// attempt.
func (l *ledger) settleReport(groups map[dropKey]*dropGroup, total int64, err error) {
	if err == nil {
		l.reported.Add(total)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, g := range groups {
		if p := l.pending[k]; p != nil {
			p.count += g.count
			p.since = g.since
		} else {
			l.pending[k] = g
		}
	}
}

// unreported returns how many lost records no report has covered yet.
func (l *ledger) unreported() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int64
	for _, g := range l.pending {
		n += g.count
	}
	return n
}

// lose writes one lost record down: its count and its group, so that the
// reporter can say whose records were lost. The caller records the metric
// (observe) outside its locks.
func (l *ledger) lose(r *sdklog.Record, reason string, now time.Time) {
	l.add(reason, 1)
	k, tracectx := dropKeyOf(r, reason)
	l.mu.Lock()
	defer l.mu.Unlock()
	k.trace = r.TraceID()
	g := l.pending[k]
	if g == nil {
		if len(l.pending) >= maxDropGroups {
			k = dropKey{reason: reason}
			tracectx = nil
			g = l.pending[k]
		}
		if g == nil {
			g = &dropGroup{since: now, span: r.SpanID(), flags: r.TraceFlags(), tracectx: tracectx}
			if !k.trace.IsValid() && k.tenant == "" {
				g.tracectx = nil // an aggregate group speaks for no request
			}
			l.pending[k] = g
		}
	}
	g.count++
	g.until = now
}

// dropKeyOf reads, through the record view every reader of the format
// shares, whose record r is: the tenant (progress.tenant of a progress
// record, else the request's tracectx tenantid) and the tracectx values,
// copied (the group outlives the record).
func dropKeyOf(r *sdklog.Record, reason string) (dropKey, []attribute.KeyValue) {
	v := tncomessage.GetView()
	defer tncomessage.PutView(v)
	v.Load(r)
	k := dropKey{reason: reason, tenant: v.Tenant}
	for _, kv := range v.TraceCtx {
		if k.tenant == "" && kv.Key == tncomessage.TraceCtxPrefix+"tenantid" {
			k.tenant = kv.Value.String()
		}
	}
	return k, slices.Clone(v.TraceCtx)
}
