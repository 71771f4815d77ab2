package adapter

import (
	"context"
	"io"
	"maps"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/semconv/v1.43.0/cicdconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/base/tooltext"
	"github.com/progressotel/progressotel/progress"
)

// Record records evt in ctx's span with the configured envelope. An event
// that cannot be recorded (a bug, or a stream's own invalid type) is
// counted and the first one logged: it never stops the stream.
//
// A failure that counts (severity ERROR or above: an ignored failure is a
// warning) carries error.type: the event's own ErrorType, else its type
// ("ansible/HostUnreachable"), a low-cardinality class of error.
func (c *Config) Record(ctx context.Context, evt progress.Event) {
	evt.Envelope = c.Envelope
	if evt.ErrorType == "" && evt.Severity >= log.SeverityError {
		evt.ErrorType = evt.Type
	}
	if err := c.Recorder.Record(ctx, evt); err != nil {
		c.recordErrs++
		if c.recordErrs == 1 {
			c.Logger.Warn(c.name+": an event was not recorded", "type", evt.Type, "error", err.Error())
		}
	}
}

// Operation is a run's span and the operation its common events name.
type Operation struct {
	Name string          // the operation of common/OperationStarted, Completed and Failed
	Ctx  context.Context // holds Span: the parent of the adapter's spans, the events' context
	Span trace.Span      // the operation's span

	cfg      *Config
	pipeline string // cicd.pipeline.name
	runID    string // cicd.pipeline.run.id, with the conventions
	ended    bool
}

// StartOperation is StartRun for a run whose pipeline is the operation,
// named spanName under SemconvOld.
func (c *Config) StartOperation(parent context.Context, name, spanName string, t time.Time, attrs ...attribute.KeyValue) *Operation {
	return c.StartRun(parent, Run{Operation: name, Pipeline: name, OldSpan: spanName}, t, attrs...)
}

// recordAt records evt at t.
func (c *Config) recordAt(ctx context.Context, evt progress.Event, t time.Time) {
	evt.Time = t
	c.Record(ctx, evt)
}

// Complete records common/OperationCompleted at end, with the duration
// since start, and ends the span (never before start) with result success.
func (o *Operation) Complete(start, end time.Time) {
	o.cfg.recordAt(o.Ctx, progress.OperationCompleted(o.Name, end.Sub(start)), end)
	o.end(start, end, cicdconv.PipelineResultSuccess, "")
}

// Fail is FailAs with the result failure: the tool ran and did not
// succeed.
func (o *Operation) Fail(start, end time.Time, failureCode, description string, extra map[string]any) {
	o.FailAs(cicdconv.PipelineResultFailure, start, end, failureCode, description, extra)
}

// FailAs records common/OperationFailed at end, with extra details, sets
// the span's status to the error with the (user-safe) description, its
// result and error.type (the failure code), and ends the span at end
// (never before start). A cancelled run's span has no Error status: its
// outcome, cancelled, says that it was stopped, not that it failed.
func (o *Operation) FailAs(result cicdconv.PipelineResultAttr, start, end time.Time, failureCode, description string, extra map[string]any) {
	evt := progress.OperationFailed(o.Name, failureCode, description)
	maps.Copy(evt.Details.(map[string]any), extra)
	o.cfg.recordAt(o.Ctx, evt, end)
	if result != cicdconv.PipelineResultCancellation {
		o.Span.SetStatus(codes.Error, description)
	}
	o.end(start, end, result, failureCode)
}

// Later returns t, or min when t is before it: a span never ends before
// it starts, whatever the clocks say.
func Later(t, min time.Time) time.Time {
	if t.Before(min) {
		return min
	}
	return t
}

// Show writes text, the tool's own text of one message or event (Ansible's
// display text, an OpenTofu @message), to Display as lines cleaned of
// terminal escapes and control characters (tooltext.Text); nothing without
// a Display.
func (c *Config) Show(text string) {
	if c.Display == nil || text == "" {
		return
	}
	text = tooltext.Text(text, 0)
	if text == "" {
		return
	}
	if text[len(text)-1] != '\n' {
		text += "\n"
	}
	_, _ = io.WriteString(c.Display, text)
}
