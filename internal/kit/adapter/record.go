package adapter

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/progress"
)

// Record records evt in ctx's span with the configured envelope. An event
// that cannot be recorded (the adapters' events are built to be valid, so
// this is a bug or a stream's own invalid type) is counted and the first
// one logged: it never stops the stream.
func (c *Config) Record(ctx context.Context, evt progress.Event) {
	evt.Envelope = c.Envelope
	if err := c.Recorder.Record(ctx, evt); err != nil {
		c.recordErrs++
		if c.recordErrs == 1 {
			c.Logger.Warn(c.name+": an event was not recorded", "type", evt.Type, "error", err.Error())
		}
	}
}

// Operation is a run's span and the operation its common events name.
type Operation struct {
	// Name is the operation of common/OperationStarted, Completed and
	// Failed.
	Name string
	// Ctx holds the operation's span: the parent of the adapter's spans
	// and the context of its events.
	Ctx context.Context
	// Span is the operation's span.
	Span trace.Span

	cfg *Config
}

// StartOperation starts the operation's span at t, a child of parent's
// span, and records common/OperationStarted in it.
func (c *Config) StartOperation(parent context.Context, name, spanName string, t time.Time, attrs ...attribute.KeyValue) *Operation {
	ctx, span := c.Tracer.Start(parent, spanName, trace.WithTimestamp(t),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	op := &Operation{Name: name, Ctx: ctx, Span: span, cfg: c}
	evt := progress.OperationStarted(name)
	evt.Time = t
	c.Record(ctx, evt)
	return op
}

// Complete records common/OperationCompleted at end, with the duration
// since start, and ends the span at end (never before start).
func (o *Operation) Complete(start, end time.Time) {
	evt := progress.OperationCompleted(o.Name, end.Sub(start))
	evt.Time = end
	o.cfg.Record(o.Ctx, evt)
	o.Span.End(trace.WithTimestamp(Later(end, start)))
}

// Fail records common/OperationFailed at end, with more details when
// extra is set, sets the span's status to the error with the
// description, and ends the span at end (never before start).
// description must be user-safe.
func (o *Operation) Fail(start, end time.Time, failureCode, description string, extra map[string]any) {
	evt := progress.OperationFailed(o.Name, failureCode, description)
	if len(extra) > 0 {
		details := evt.Details.(map[string]any)
		for k, v := range extra {
			details[k] = v
		}
	}
	evt.Time = end
	o.cfg.Record(o.Ctx, evt)
	o.Span.SetStatus(codes.Error, description)
	o.Span.End(trace.WithTimestamp(Later(end, start)))
}

// Later returns t, or min when t is before it: a span never ends before
// it starts, whatever the clocks say.
func Later(t, min time.Time) time.Time {
	if t.Before(min) {
		return min
	}
	return t
}
