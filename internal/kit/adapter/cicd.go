package adapter

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/cicdconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

// SemconvEnv chooses the span conventions, as for OpenTelemetry's HTTP
// migration: a comma-separated list in which "cicd" asks for the CI/CD
// conventions only and "cicd/dup" for them beside the adapters' own names;
// without either, SemconvOld.
const SemconvEnv = "OTEL_SEMCONV_STABILITY_OPT_IN"

// The variables of the URL templates, read when no option set one.
const (
	TaskURLTemplateEnv = "PROGRESSOTEL_TASK_URL_TEMPLATE"
	RunURLTemplateEnv  = "PROGRESSOTEL_RUN_URL_TEMPLATE"
)

// Semconv says which names the adapters' spans carry.
type Semconv int

const (
	// SemconvOld: the adapters' own span names and attributes only, kind
	// INTERNAL everywhere (the default: cicd.* is a Release Candidate, and
	// saved queries and the live view read span names).
	SemconvOld Semconv = iota
	// SemconvDup: the CI/CD conventions (span kinds, run and task span
	// names, cicd.* attributes) and the adapters' own attributes beside
	// them.
	SemconvDup
	// SemconvNew: the CI/CD conventions, without the adapters' own
	// attributes that a convention replaces.
	SemconvNew
)

// ParseSemconv reads a SemconvEnv value; "cicd/dup" wins over "cicd", as
// "http/dup" does over "http".
func ParseSemconv(v string) Semconv {
	s := SemconvOld
	for tok := range strings.SplitSeq(v, ",") {
		switch strings.ToLower(strings.TrimSpace(tok)) {
		case "cicd/dup":
			return SemconvDup
		case "cicd":
			s = SemconvNew
		}
	}
	return s
}

// SetSemconv chooses the span conventions in place of SemconvEnv.
func (c *Config) SetSemconv(s Semconv) { c.Semconv, c.semconvSet = s, true }

// SetTaskURLTemplate sets the template of cicd.pipeline.task.run.url.full
// in place of TaskURLTemplateEnv (see the Place* placeholders); "" leaves
// the attribute out.
func (c *Config) SetTaskURLTemplate(t string) { c.TaskURLTemplate, c.taskURLSet = t, true }

// cicd reports whether the spans carry the CI/CD conventions.
func (c *Config) cicd() bool { return c.Semconv != SemconvOld }

// The placeholders of the URL templates, each replaced by its value escaped
// for any part of a URL; an unknown {name} stays as written.
const (
	PlaceTraceID   = "{trace.id}"      // the run's trace id, 32 hex digits
	PlaceRunID     = "{run.id}"        // cicd.pipeline.run.id
	PlacePipeline  = "{pipeline.name}" // cicd.pipeline.name
	PlaceTaskName  = "{task.name}"     // cicd.pipeline.task.name
	PlaceTaskID    = "{task.id}"       // the tool's own id of the task (Ansible's task uuid, tofu's address)
	PlaceTaskRunID = "{task.run.id}"   // cicd.pipeline.task.run.id
)

// expandURL fills tmpl's placeholders from pairs (placeholder, value); ""
// for no template. Each value is percent-encoded but for RFC 3986's
// unreserved bytes, so that it is safe in a path segment, a query value and
// a fragment alike (url.PathEscape leaves "&" and "=", QueryEscape alone
// writes "+" for a space).
func expandURL(tmpl string, pairs ...string) string {
	if tmpl == "" {
		return ""
	}
	for i := 1; i < len(pairs); i += 2 {
		pairs[i] = strings.ReplaceAll(url.QueryEscape(pairs[i]), "+", "%20")
	}
	return strings.NewReplacer(pairs...).Replace(tmpl)
}

// checkURLTemplate reports whether tmpl, its placeholders filled, is an
// absolute URL (url.full must be one): a wrong link is worse than none.
func checkURLTemplate(tmpl string) bool {
	s := expandURL(tmpl, PlaceTraceID, "x", PlaceRunID, "x", PlacePipeline, "x",
		PlaceTaskName, "x", PlaceTaskID, "x", PlaceTaskRunID, "x")
	u, err := url.Parse(s)
	return err == nil && u.IsAbs() && u.Host != ""
}

// Run describes a run for its span: a playbook run, a tofu command.
type Run struct {
	Operation string // the operation of the common events
	// Pipeline is cicd.pipeline.name (the playbook's file name, the tofu
	// command); the span is named "RUN <Pipeline>".
	Pipeline string
	OldSpan  string // the span's name under SemconvOld ("playbook site.yml")
	// Old are the adapter's attributes that a convention replaces
	// (ansible.playbook by cicd.pipeline.name): left out under SemconvNew.
	Old []attribute.KeyValue
}

// runResultOutcome is the progress.outcome of a run span by its result.
var runResultOutcome = map[cicdconv.PipelineResultAttr]string{
	cicdconv.PipelineResultSuccess:      outcome.OK,
	cicdconv.PipelineResultFailure:      outcome.Failed,
	cicdconv.PipelineResultError:        outcome.Failed,
	cicdconv.PipelineResultTimeout:      outcome.TimedOut,
	cicdconv.PipelineResultCancellation: outcome.Cancelled,
	cicdconv.PipelineResultSkip:         outcome.Skipped,
}

// RunOutcome is the progress.outcome of a run span by its result: for an
// adapter that sets the outcome on its own spans (a play, a host) by the
// run's.
func RunOutcome(r cicdconv.PipelineResultAttr) string { return runResultOutcome[r] }

// ResultOf is the result of a run that failed with err: timeout when a
// deadline ended it, cancellation when its context was cancelled, else
// failure. A run whose own machinery broke (the tool could not start, its
// output broke off) is PipelineResultError: the adapter says so itself.
func ResultOf(err error) cicdconv.PipelineResultAttr {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return cicdconv.PipelineResultTimeout
	case errors.Is(err, context.Canceled):
		return cicdconv.PipelineResultCancellation
	}
	return cicdconv.PipelineResultFailure
}

// StartRun starts the run's span at t, a child of parent's span, and
// records common/OperationStarted in it. With the CI/CD conventions the
// span has kind SERVER, is named "RUN <pipeline>" and carries
// cicd.pipeline.name, .action.name and .run.id (the span's own id: unique
// for every run), and the run counts in cicd.pipeline.run.active.
func (c *Config) StartRun(parent context.Context, r Run, t time.Time, attrs ...attribute.KeyValue) *Operation {
	name, kind := r.OldSpan, trace.SpanKindInternal
	attrs = attrs[:len(attrs):len(attrs)] // appends never write to the caller's array
	if c.Semconv != SemconvNew {
		attrs = append(attrs, r.Old...)
	}
	if c.cicd() {
		name, kind = semconv.CICDPipelineActionNameRun.Value.AsString()+" "+r.Pipeline, trace.SpanKindServer
		attrs = append(attrs, semconv.CICDPipelineName(r.Pipeline), semconv.CICDPipelineActionNameRun)
	}
	ctx, span := c.Tracer.Start(parent, name, trace.WithTimestamp(t),
		trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	op := &Operation{Name: r.Operation, Ctx: ctx, Span: span, cfg: c, pipeline: r.Pipeline}
	if c.cicd() {
		sc := span.SpanContext()
		op.runID = sc.SpanID().String()
		span.SetAttributes(semconv.CICDPipelineRunID(op.runID))
		if u := expandURL(c.RunURLTemplate, PlaceTraceID, sc.TraceID().String(), PlaceRunID, op.runID,
			PlacePipeline, r.Pipeline); u != "" {
			span.SetAttributes(semconv.CICDPipelineRunURLFull(u))
		}
	}
	c.metrics.start(ctx, r.Pipeline)
	c.recordAt(ctx, progress.OperationStarted(r.Operation), t)
	return op
}

// end sets the run span's result, records the run's metrics and ends the
// span at end (never before start).
func (o *Operation) end(start, end time.Time, result cicdconv.PipelineResultAttr, errType string) {
	if o.ended {
		return
	}
	o.ended = true
	setOutcome(o.Span, runResultOutcome[result])
	if o.cfg.cicd() {
		o.Span.SetAttributes(semconv.CICDPipelineResultKey.String(string(result)))
		if errType != "" {
			o.Span.SetAttributes(semconv.ErrorTypeKey.String(errType))
		}
	}
	end = Later(end, start)
	o.cfg.metrics.end(o.Ctx, o.pipeline, end.Sub(start), result, errType)
	o.Span.End(trace.WithTimestamp(end))
}

// Task describes a task for its span: an Ansible task, a resource
// operation.
type Task struct {
	// Name is cicd.pipeline.task.name, as the tool shows it ("Install
	// nginx", "create null_resource.a[0]").
	Name string
	ID   string // the tool's own id ({task.id}): Ansible's task uuid, tofu's address
	// Span is the span's name under the conventions, low-cardinality (no
	// instance key, no id); "": OldSpan.
	Span    string
	OldSpan string // the span's name under SemconvOld
	// Old are the adapter's attributes a convention replaces
	// (ansible.task.name by cicd.pipeline.task.name).
	Old []attribute.KeyValue
}

// StartTask starts a task's span at t, a child of parent's span (the run's
// or one below it). With the CI/CD conventions it carries
// cicd.pipeline.task.name, .task.type (deploy: the adapters' tools change
// infrastructure), .task.run.id (the span's own id: unique within the
// run) and, when a task URL template is set, .task.run.url.full.
func (o *Operation) StartTask(parent context.Context, t time.Time, task Task, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	c := o.cfg
	name := task.OldSpan
	attrs = attrs[:len(attrs):len(attrs)]
	if c.Semconv != SemconvNew {
		attrs = append(attrs, task.Old...)
	}
	if c.cicd() {
		if task.Span != "" {
			name = task.Span
		}
		attrs = append(attrs, semconv.CICDPipelineTaskName(task.Name), semconv.CICDPipelineTaskTypeDeploy)
	}
	ctx, span := c.Tracer.Start(parent, name, trace.WithTimestamp(t),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	if c.cicd() {
		sc := span.SpanContext()
		id := sc.SpanID().String()
		span.SetAttributes(semconv.CICDPipelineTaskRunID(id))
		if u := expandURL(c.TaskURLTemplate, PlaceTraceID, sc.TraceID().String(), PlaceRunID, o.runID,
			PlacePipeline, o.pipeline, PlaceTaskName, task.Name, PlaceTaskID, task.ID, PlaceTaskRunID, id); u != "" {
			span.SetAttributes(semconv.CICDPipelineTaskRunURLFull(u))
		}
	}
	return ctx, span
}

// taskResult is cicd.pipeline.task.run.result by progress.outcome. An
// ignored or rescued failure is still the task's failure (the run goes
// on, which its own result says); an unreachable target fails the task.
var taskResult = map[string]attribute.KeyValue{
	outcome.OK:          semconv.CICDPipelineTaskRunResultSuccess,
	outcome.Changed:     semconv.CICDPipelineTaskRunResultSuccess,
	outcome.Skipped:     semconv.CICDPipelineTaskRunResultSkip,
	outcome.Failed:      semconv.CICDPipelineTaskRunResultFailure,
	outcome.Ignored:     semconv.CICDPipelineTaskRunResultFailure,
	outcome.Rescued:     semconv.CICDPipelineTaskRunResultFailure,
	outcome.Cancelled:   semconv.CICDPipelineTaskRunResultCancellation,
	outcome.TimedOut:    semconv.CICDPipelineTaskRunResultTimeout,
	outcome.Unreachable: semconv.CICDPipelineTaskRunResultFailure,
}

// TaskResult is cicd.pipeline.task.run.result for a progress.outcome
// (one of package outcome's), and false for another value.
func TaskResult(out string) (attribute.KeyValue, bool) {
	kv, ok := taskResult[out]
	return kv, ok
}

// failing are the outcomes of a failure that counts: error.type is the
// outcome on their task spans. A cancelled task was stopped, not failed.
var failing = map[string]bool{outcome.Failed: true, outcome.Unreachable: true, outcome.TimedOut: true}

// EndTask ends a task's span at t with its outcome (package outcome's
// values: progress.outcome, and cicd.pipeline.task.run.result with the
// conventions; error.type is the outcome of a failure that counts). A
// non-empty status sets the span's status to Error with it (an adapter
// that set the status before passes "").
func (o *Operation) EndTask(span trace.Span, t time.Time, out, status string) {
	setOutcome(span, out)
	if kv, ok := taskResult[out]; ok && o.cfg.cicd() {
		span.SetAttributes(kv)
	}
	if status != "" {
		span.SetStatus(codes.Error, status)
	}
	if o.cfg.cicd() && failing[out] {
		span.SetAttributes(semconv.ErrorTypeKey.String(out))
	}
	span.End(trace.WithTimestamp(t))
}

// setOutcome sets progress.outcome where the span's status alone cannot
// say it (contract of package outcome): not for ok and failed, which a
// reader takes from the status.
func setOutcome(span trace.Span, out string) {
	if out != outcome.OK && out != outcome.Failed && out != "" {
		span.SetAttributes(attribute.String(outcome.Key, out))
	}
}

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
