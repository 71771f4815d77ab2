package otelbridge

import (
	"context"
	"errors"
	"sync"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// errSpansCut cancels the span exports in progress when Shutdown's context
// ends.
var errSpansCut = errors.New("otelbridge: the span export was cut at the shutdown deadline")

// boundedSpanExporter lets Telemetry.Shutdown cut the span exports of the
// SDK's span batcher at its deadline: the batcher's Shutdown returns when
// its context ends, but its goroutine goes on draining for up to
// OTEL_BSP_EXPORT_TIMEOUT. Once cut, every export fails at once, and done
// tells Telemetry.Shutdown that no span export is left.
type boundedSpanExporter struct {
	next sdktrace.SpanExporter

	cut     context.Context
	cutSpan context.CancelCauseFunc

	doneOnce sync.Once
	done     chan struct{} // closed when the batcher has shut the exporter down
}

func newBoundedSpanExporter(next sdktrace.SpanExporter) *boundedSpanExporter {
	e := &boundedSpanExporter{next: next, done: make(chan struct{})}
	e.cut, e.cutSpan = context.WithCancelCause(context.Background())
	return e
}

func (e *boundedSpanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.cut.Err() != nil {
		return context.Cause(e.cut)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(e.cut, func() { cancel(context.Cause(e.cut)) })
	defer stop()
	return e.next.ExportSpans(ctx, spans)
}

func (e *boundedSpanExporter) Shutdown(ctx context.Context) error {
	defer e.doneOnce.Do(func() { close(e.done) })
	return e.next.Shutdown(ctx)
}
