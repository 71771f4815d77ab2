package sdkparts

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/progress"
)

// reporter exports one common/EventsDropped event per group of lost records
// the ledger holds, into the same exporter, with the tenant, trace and
// tracectx of the records it speaks for, so that it is routed where they
// would have gone. Only the worker calls report; learn is safe from OnEmit.
type reporter struct {
	res atomic.Pointer[resource.Resource] // learned from the first record

	rec  *progress.Recorder // built on first use
	sink *reportSink
}

// learn keeps the resource of the first record that has one, so that the
// reports carry the same resource as the records they account for.
func (p *reporter) learn(r *sdklog.Record) {
	if p.res.Load() == nil {
		if res := r.Resource(); res != nil {
			p.res.CompareAndSwap(nil, res)
		}
	}
}

// report exports a report of every group the ledger holds, and writes the
// outcome down in the ledger. A failed report keeps its groups pending for
// the next attempt. It returns the export's error.
func (p *reporter) report(ctx context.Context, exp sdklog.Exporter, l *ledger) error {
	groups := l.takePending()
	if len(groups) == 0 {
		return nil
	}
	recs, total := p.records(groups)
	err := exp.Export(ctx, recs)
	clear(recs)
	if err != nil {
		otel.Handle(err)
	}
	l.settleReport(groups, total, err)
	return err
}

func (p *reporter) records(groups map[dropKey]*dropGroup) ([]sdklog.Record, int64) {
	if p.rec == nil {
		p.sink = &reportSink{}
		popts := []sdklog.LoggerProviderOption{sdklog.WithProcessor(p.sink)}
		if res := p.res.Load(); res != nil {
			popts = append(popts, sdklog.WithResource(res))
		}
		// The reports carry no progress.sequence: they are not part of any
		// operation's sequence, they account for its gaps.
		p.rec = progress.NewRecorder(
			progress.WithLoggerProvider(sdklog.NewLoggerProvider(popts...)),
			progress.WithoutSequence(),
			progress.WithMeterProvider(metricnoop.NewMeterProvider()))
	}
	var total int64
	p.sink.recs = p.sink.recs[:0]
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
		before := len(p.sink.recs)
		_ = p.rec.Record(ctx, evt)
		if len(p.sink.recs) > before && len(g.tracectx) > 0 {
			p.sink.recs[len(p.sink.recs)-1].AddAttributes(g.tracectx...)
		}
	}
	return p.sink.recs, total
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
