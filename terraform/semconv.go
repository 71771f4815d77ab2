package terraform

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/semconv/v1.43.0/cicdconv"
	"go.opentelemetry.io/otel/trace"

	spanoutcome "github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/internal/kit/adapter"
)

// startTask starts the span of a resource operation (action "refresh" for
// a refresh): a task of the run. Under the CI/CD conventions its name
// drops the address's instance keys ("create null_resource.a" for every
// null_resource.a[i]), so that it stays low-cardinality; the task's name
// keeps them.
func (d *decoder) startTask(parent context.Context, action, addr string, t time.Time, attrs ...attribute.KeyValue) *span {
	ctx, s := d.op.StartTask(parent, t, adapter.Task{
		Name: action + " " + addr, ID: addr,
		Span: action + " " + withoutKeys(addr), OldSpan: action + " " + addr,
	}, attrs...)
	return &span{ctx: ctx, span: s, task: true}
}

// endSpan ends s at t: a task's span with its outcome, another's with its
// status only.
func (d *decoder) endSpan(s *span, t time.Time, out, status string) {
	if s.task {
		d.op.EndTask(s.span, t, out, status)
		return
	}
	if status != "" {
		s.span.SetStatus(codes.Error, status)
	}
	s.span.End(trace.WithTimestamp(t))
}

// applyOutcome is the outcome of an operation that completed: changed
// for a create, update, delete or replace, ok for a read.
func applyOutcome(action string) string {
	if counted(action) {
		return spanoutcome.Changed
	}
	return spanoutcome.OK
}

// unendedOutcome is the outcome of an operation the tool never ended:
// cancelled or timed out with the run, else failed.
func unendedOutcome(o outcome) string {
	switch adapter.ResultOf(o.cause) {
	case cicdconv.PipelineResultCancellation:
		return spanoutcome.Cancelled
	case cicdconv.PipelineResultTimeout:
		return spanoutcome.TimedOut
	}
	return spanoutcome.Failed
}

// runResult is cicd.pipeline.result of a failed run (docs/conventions.md
// has the table): timeout or cancellation when the context said so; an
// error when the tool never ran or its output could not be read (exit -1
// with a cause: the machinery around the tool); else the tool's failure.
func runResult(o outcome) cicdconv.PipelineResultAttr {
	if r := adapter.ResultOf(o.cause); r != cicdconv.PipelineResultFailure {
		return r
	}
	if o.cause != nil && o.exitCode < 0 {
		return cicdconv.PipelineResultError
	}
	return cicdconv.PipelineResultFailure
}

// withoutKeys drops the instance keys of a resource address:
// module.m["a"].null_resource.b[0] is module.m.null_resource.b. A quoted
// key may hold brackets.
func withoutKeys(addr string) string {
	if !strings.ContainsRune(addr, '[') {
		return addr
	}
	var b strings.Builder
	depth, quoted := 0, false
	for i := 0; i < len(addr); i++ {
		c := addr[i]
		switch {
		case quoted:
			if c == '\\' {
				i++
			} else if c == '"' {
				quoted = false
			}
		case c == '"' && depth > 0:
			quoted = true
		case c == '[':
			depth++
		case c == ']' && depth > 0:
			depth--
		case depth == 0:
			b.WriteByte(c)
		}
	}
	return b.String()
}
