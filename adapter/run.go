package adapter

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"

	kit "github.com/progressotel/progressotel/internal/kit/adapter"
	"github.com/progressotel/progressotel/progress"
)

// Runner records the runs of an adapter written outside this module (the
// kube adapter is one) as ansible and terraform record theirs: each run is
// a span framed by common/OperationStarted and common/OperationCompleted or
// OperationFailed, with the envelope of WithEnvelope, the CI/CD
// conventions that OTEL_SEMCONV_STABILITY_OPT_IN asks for and the CI/CD run
// metrics. A Runner is safe for concurrent use once made; a Run is not.
type Runner struct {
	cfg kit.Config
}

// NewRunner returns the Runner of the adapter named name (it prefixes the
// warnings: "kube"), whose spans have the instrumentation scope scope,
// configured by s (Apply): its Recorder (default progress.Default()),
// TracerProvider, Envelope, Operation, Logger.
func NewRunner(name, scope string, s Settings) *Runner {
	r := &Runner{}
	kit.Configure(&r.cfg, &r.cfg, kit.Defaults{Name: name, Scope: scope, GracePeriod: time.Second, MaxLineBytes: 1}, kit.Shared(s))
	return r
}

// Start starts a run at t in parent's span: its span named spanName (or
// "RUN <operation>" with the CI/CD conventions), and common/OperationStarted
// naming operation, or WithOperation's name when it was given.
func (r *Runner) Start(parent context.Context, operation, spanName string, t time.Time, attrs ...attribute.KeyValue) *Run {
	if r.cfg.Operation != "" {
		operation = r.cfg.Operation
	}
	return &Run{op: r.cfg.StartOperation(parent, operation, spanName, t, attrs...), start: t}
}

// Record records evt in ctx with the Runner's envelope; an event that
// cannot be recorded is logged once and never stops the run. A failure
// that counts (severity ERROR or above) carries error.type: its own
// ErrorType, else its type.
func (r *Runner) Record(ctx context.Context, evt progress.Event) { r.cfg.Record(ctx, evt) }

// Run is one run of a Runner: its span and its operation.
type Run struct {
	op    *kit.Operation
	start time.Time
}

// Context holds the run's span: the parent of the adapter's own spans and
// the context of the run's events.
func (r *Run) Context() context.Context { return r.op.Ctx }

// Complete records common/OperationCompleted at end, with the run's
// duration, and ends its span (never before it started).
func (r *Run) Complete(end time.Time) { r.op.Complete(r.start, end) }

// Fail records common/OperationFailed at end with failureCode (one of
// progress.Failure*), the user-safe description and extra details, sets
// the span's status to Error with the description and ends it (never
// before it started).
func (r *Run) Fail(end time.Time, failureCode, description string, extra map[string]any) {
	r.op.Fail(r.start, end, failureCode, description, extra)
}
