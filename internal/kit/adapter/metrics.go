package adapter

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/semconv/v1.43.0/cicdconv"

	"github.com/progressotel/progressotel/progress/wire"
)

// runMetrics are the CI/CD conventions' run metrics, recorded by the run
// span's helpers (StartRun, Complete, FailAs).
type runMetrics struct {
	duration cicdconv.PipelineRunDuration
	active   cicdconv.PipelineRunActive
	errors   cicdconv.PipelineRunErrors
}

// newRunMetrics makes the instruments on mp's meter of the adapter's
// scope. One that cannot be made is a no-op (cicdconv's fallback), its
// error returned for the adapter's log: metrics never stop a run.
func newRunMetrics(mp metric.MeterProvider, scope string) (*runMetrics, error) {
	m := mp.Meter(scope, metric.WithInstrumentationVersion(wire.ScopeVersion))
	var rm runMetrics
	var e1, e2, e3 error
	rm.duration, e1 = cicdconv.NewPipelineRunDuration(m)
	rm.active, e2 = cicdconv.NewPipelineRunActive(m)
	rm.errors, e3 = cicdconv.NewPipelineRunErrors(m)
	return &rm, errors.Join(e1, e2, e3)
}

// start counts a run as active (state executing: the adapters see a run
// from its tool's start).
func (m *runMetrics) start(ctx context.Context, pipeline string) {
	if m == nil {
		return
	}
	m.active.Add(ctx, 1, pipeline, cicdconv.PipelineRunStateExecuting)
}

// end records a run's duration by pipeline, result and error type, counts
// an error for a result failure or error, and ends its count as active.
func (m *runMetrics) end(ctx context.Context, pipeline string, d time.Duration, result cicdconv.PipelineResultAttr, errType string) {
	if m == nil {
		return
	}
	m.active.Add(ctx, -1, pipeline, cicdconv.PipelineRunStateExecuting)
	attrs := []attribute.KeyValue{m.duration.AttrPipelineResult(result)}
	if errType != "" {
		attrs = append(attrs, m.duration.AttrErrorType(cicdconv.ErrorTypeAttr(errType)))
	}
	m.duration.Record(ctx, d.Seconds(), pipeline, cicdconv.PipelineRunStateExecuting, attrs...)
	if errType != "" && (result == cicdconv.PipelineResultFailure || result == cicdconv.PipelineResultError) {
		m.errors.Add(ctx, 1, pipeline, cicdconv.ErrorTypeAttr(errType))
	}
}
