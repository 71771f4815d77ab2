package prettyexporter

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/base/outcome"
)

// The live view's tree is the spans' tree: a span is a row under its parent span's row, ended as
// its status and its progress.outcome attribute (internal/base/outcome) say. It knows no adapter.

// SpanProcessor returns the span processor that feeds the live view's tree: register it with the
// TracerProvider whose spans the view shows (otelbridge.Setup does it when the live view is an
// exporter). Each start and end updates the model under a mutex, never waiting for the terminal.
// Its Shutdown and ForceFlush do nothing: the exporter's own do it.
func (e *LiveExporter) SpanProcessor() sdktrace.SpanProcessor { return liveSpans{e} }

// LogProcessor returns a log processor that hands each record to the view as it is emitted, instead
// of in batches: the view then shows records, spans and Output's lines in the order they happened.
// It costs the emitting goroutine what Export costs (a mutex and a model update, never I/O). Its
// Shutdown and ForceFlush are the exporter's.
func (e *LiveExporter) LogProcessor() sdklog.Processor { return liveLogs{e} }

// update runs f on the model under the lock, unless the exporter is not running, and wakes the
// goroutine.
func (e *LiveExporter) update(f func(m *liveModel, wall time.Time)) {
	if e == nil || e.model == nil || e.stopped.Load() {
		return
	}
	e.mu.Lock()
	f(e.model, e.now())
	e.mu.Unlock()
	e.signal()
}

type liveLogs struct{ e *LiveExporter }

func (l liveLogs) OnEmit(_ context.Context, r *sdklog.Record) error {
	l.e.update(func(m *liveModel, wall time.Time) {
		m.direct = true
		m.apply(r, wall)
	})
	return nil
}

func (liveLogs) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (l liveLogs) Shutdown(ctx context.Context) error                   { return l.e.Shutdown(ctx) }
func (l liveLogs) ForceFlush(ctx context.Context) error                 { return l.e.ForceFlush(ctx) }

type liveSpans struct{ e *LiveExporter }

func (s liveSpans) OnStart(_ context.Context, span sdktrace.ReadWriteSpan) {
	if sc := span.SpanContext(); sc.IsValid() {
		s.e.update(func(m *liveModel, wall time.Time) {
			m.spanStart(sc, span.Parent(), span.Name(), span.StartTime(), wall)
		})
	}
}

func (s liveSpans) OnEnd(span sdktrace.ReadOnlySpan) {
	sc := span.SpanContext()
	if !sc.IsValid() {
		return
	}
	out := ""
	for _, kv := range span.Attributes() {
		if string(kv.Key) == outcome.Key {
			out = kv.Value.AsString()
		}
	}
	st := span.Status()
	s.e.update(func(m *liveModel, wall time.Time) {
		m.spanEnd(sc, span.EndTime(), st.Code, st.Description, out, wall)
	})
}

func (liveSpans) Shutdown(context.Context) error   { return nil }
func (liveSpans) ForceFlush(context.Context) error { return nil }

// headGrace is how long a tree stays after its head span ended, for the records recorded before the
// end that a batching processor still holds (OperationCompleted, the last failure). A model fed
// only by LogProcessor has them already: its tree ends with its head span, so that its final state
// comes before the next operation's lines.
const headGrace = 500 * time.Millisecond

// spanStart adds a span's row: under its parent's row when the view knows the parent, else it is
// the head of its trace's tree, or (a second span without a known parent) a top row of it.
func (m *liveModel) spanStart(sc trace.SpanContext, parent trace.SpanContext, name string, start, wall time.Time) {
	key := liveKey{trace: sc.TraceID()}
	if _, ok := m.endedSet[key]; ok || m.flat {
		return // a span after its operation ended: nothing to draw it in
	}
	if start.IsZero() {
		start = wall
	}
	pn := m.spans[spanKey{sc.TraceID(), parent.SpanID()}]
	t := m.tree(key, wall)
	m.touch(t, start, wall)
	if pn == nil && !t.root.span.IsValid() {
		t.root.span = sc.SpanID()
		m.spans[spanKey{sc.TraceID(), sc.SpanID()}] = &t.root
		if t.start.IsZero() || t.op == "" {
			t.start = start
		}
		if t.title == "" || t.op == "" {
			t.title = safeText(name, maxLabelBytes)
		}
		return
	}
	if pn == nil {
		pn = &t.root
	}
	n := m.newNode(t, pn, kindSpan, safeText(name, maxLabelBytes), start)
	if n == nil {
		return
	}
	n.span = sc.SpanID()
	m.spans[spanKey{sc.TraceID(), n.span}] = n
	t.spanRows++
	if t.last != nil && !t.last.status.finished() {
		m.remove(t.last) // the driver's last event gives way to the spans' rows
		t.last = nil
	}
}

// spanEnd finishes a span's row with the status its span ended with. The head's end ends the tree:
// at once when every record came through LogProcessor, else after headGrace.
func (m *liveModel) spanEnd(sc trace.SpanContext, end time.Time, code codes.Code, desc, out string, wall time.Time) {
	k := spanKey{sc.TraceID(), sc.SpanID()}
	n := m.spans[k]
	if n == nil {
		return
	}
	delete(m.spans, k)
	t := n.tree
	t.see(end, wall)
	m.gen++
	st, ok := outcomes[out] // its progress.outcome, else its status (Error is a failure)
	if !ok {
		st = stOK
		if code == codes.Error {
			st = stFailed
		}
	}
	if n == &t.root {
		if t.status == stRunning {
			// No common/OperationCompleted or Failed (yet): the head span says how the operation
			// ended.
			t.status, t.end = stOK, end
			if st.failure() {
				t.status = stFailed
				if t.msg == "" {
					t.msg = safeText(failureText(st, desc), maxMsgBytes)
				}
			}
		}
		if m.direct && !m.batched {
			m.endTree(t, wall)
			return
		}
		t.closing = wall.Add(headGrace)
		return
	}
	if st < stRescued {
		n.msg, n.told = "", false // a warning on the way (a retry) is past
	} else if n.msg == "" {
		n.msg = safeText(failureText(st, desc), maxMsgBytes)
	}
	m.finish(n, st, end)
}

// outcomes are the statuses of the progress.outcome values.
var outcomes = map[string]liveStatus{
	outcome.OK: stOK, outcome.Changed: stChanged, outcome.Skipped: stSkipped,
	outcome.Failed: stFailed, outcome.Ignored: stIgnored, outcome.Rescued: stRescued,
	outcome.Cancelled: stCancelled, outcome.TimedOut: stTimeout, outcome.Unreachable: stUnreachable,
}

// failureText is a span's status description, unless it only repeats the status's word ("failed").
func failureText(st liveStatus, desc string) string {
	if strings.EqualFold(desc, statusWords[st]) || strings.EqualFold(desc, "failed") || strings.EqualFold(desc, "error") {
		return ""
	}
	return desc
}
