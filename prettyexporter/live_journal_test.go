package prettyexporter

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/base/outcome"
)

// step is one thing the live view is told, in the order it happened: a
// record, a span's start or a span's end, as the real SDK hands them to
// LogProcessor and SpanProcessor.
type step struct {
	rec *sdklog.Record

	start, end bool
	sc, parent trace.SpanContext
	name       string
	at         time.Time
	code       codes.Code
	desc, out  string
}

// when is the step's own time: a record's, a span's start or end.
func (s *step) when() time.Time {
	if s.rec != nil {
		return s.rec.Timestamp()
	}
	return s.at
}

// what names the step in a golden file.
func (s *step) what() string {
	switch {
	case s.start:
		return "start " + s.name
	case s.end:
		return "end " + s.name
	}
	return s.rec.EventName()
}

// applyStep gives the model one step at wall time wall.
func applyStep(m *liveModel, s *step, wall time.Time) {
	switch {
	case s.start:
		m.spanStart(s.sc, s.parent, s.name, s.at, wall)
	case s.end:
		m.spanEnd(s.sc, s.at, s.code, s.desc, s.out, wall)
	default:
		m.apply(s.rec, wall)
	}
}

// journal keeps the steps: a log processor and a span processor that
// append to one list, as the SDK calls them (synchronously, in the
// driver's goroutine).
type journal struct {
	mu    sync.Mutex
	steps []step
}

func (j *journal) add(s step) {
	j.mu.Lock()
	j.steps = append(j.steps, s)
	j.mu.Unlock()
}

func (j *journal) Steps() []step {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]step(nil), j.steps...)
}

// Records is the journal's records alone.
func (j *journal) Records() []sdklog.Record {
	var out []sdklog.Record
	for _, s := range j.Steps() {
		if s.rec != nil {
			out = append(out, *s.rec)
		}
	}
	return out
}

type journalLogs struct{ j *journal }

func (l journalLogs) OnEmit(_ context.Context, r *sdklog.Record) error {
	c := r.Clone()
	l.j.add(step{rec: &c})
	return nil
}
func (journalLogs) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (journalLogs) Shutdown(context.Context) error                         { return nil }
func (journalLogs) ForceFlush(context.Context) error                       { return nil }

type journalSpans struct{ j *journal }

func (s journalSpans) OnStart(_ context.Context, sp sdktrace.ReadWriteSpan) {
	s.j.add(step{start: true, sc: sp.SpanContext(), parent: sp.Parent(), name: sp.Name(), at: sp.StartTime()})
}

func (s journalSpans) OnEnd(sp sdktrace.ReadOnlySpan) {
	out := ""
	for _, kv := range sp.Attributes() {
		if string(kv.Key) == outcome.Key {
			out = kv.Value.AsString()
		}
	}
	s.j.add(step{end: true, sc: sp.SpanContext(), name: sp.Name(), at: sp.EndTime(), code: sp.Status().Code, desc: sp.Status().Description, out: out})
}
func (journalSpans) Shutdown(context.Context) error   { return nil }
func (journalSpans) ForceFlush(context.Context) error { return nil }

func countNodes(n *liveNode) int {
	c := 1
	for k := n.first; k != nil; k = k.next {
		c += countNodes(k)
	}
	return c
}

// feed gives the exporter steps as the SDK does with LogProcessor and
// SpanProcessor: each at the exporter's clock.
func (e *LiveExporter) feed(steps []step) error {
	if e.stopped.Load() {
		return sdklog.ErrExporterShutdown
	}
	e.mu.Lock()
	for i := range steps {
		applyStep(e.model, &steps[i], e.now())
	}
	e.mu.Unlock()
	e.signal()
	return nil
}
