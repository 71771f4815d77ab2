package progresstest

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/cicdconv"
	"go.opentelemetry.io/otel/trace"
)

// CheckCICDSpans fails t with one error per rule of the CI/CD and CLI
// semantic conventions (v1.43.0) that spans break (see CICDViolations),
// and when no span carries either convention: a driver's test runs it
// over the spans of a real run (tracetest.SpanRecorder's Ended, or
// tracetest.SpanStubs' Snapshots).
func CheckCICDSpans(t testing.TB, spans []sdktrace.ReadOnlySpan, opts ...CICDOption) {
	t.Helper()
	for _, v := range CICDViolations(spans, opts...) {
		t.Error(v)
	}
}

// CICDOption changes a rule of CICDViolations.
type CICDOption func(*cicdCheck)

// AllowCommandArgs accepts process.command_args and the like on a CLI
// span: a driver that records them on request (after its redaction).
func AllowCommandArgs() CICDOption { return func(c *cicdCheck) { c.allowArgs = true } }

type cicdCheck struct{ allowArgs bool }

// CICDViolations returns the rules that spans break, one sentence each,
// naming the span; none for conforming spans. A span is judged by what it
// carries:
//   - A run span (a cicd.pipeline.* attribute outside cicd.pipeline.task.*)
//     has kind SERVER, cicd.pipeline.name, cicd.pipeline.action.name
//     (BUILD, RUN or SYNC), cicd.pipeline.run.id and cicd.pipeline.result
//     (success, failure, error, timeout, cancellation or skip); it is named
//     "{action} {pipeline}"; it has error.type on failure or error, and no
//     Error status on success or skip.
//   - A task span (a cicd.pipeline.task.* attribute) has kind INTERNAL,
//     cicd.pipeline.task.name, .type (build, test or deploy), .run.result
//     (the six values) and .run.id, unique within its run; it has a run
//     span above it; its name holds no id (its own, the run's, a UUID, 16
//     or more hex digits) and no instance key in brackets ([0], ["eu"]).
//   - A CLI span (process.executable.name, process.exit.code or
//     process.pid) has kind CLIENT, is named after process.executable.name,
//     carries all three, and error.type when the exit code is not 0; it
//     records no command arguments unless AllowCommandArgs.
//   - Any *.url.full is an absolute URL.
func CICDViolations(spans []sdktrace.ReadOnlySpan, opts ...CICDOption) []string {
	var c cicdCheck
	for _, o := range opts {
		o(&c)
	}
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID()] = s
	}
	var out []string
	bad := func(s sdktrace.ReadOnlySpan, format string, args ...any) {
		out = append(out, fmt.Sprintf("span %q (%s): ", s.Name(), s.SpanContext().SpanID())+fmt.Sprintf(format, args...))
	}
	type taskID struct {
		run trace.SpanID
		id  string
	}
	taskIDs := map[taskID]bool{}
	seen := 0
	for _, s := range spans {
		a := attrsOf(s)
		if a.has(isRunKey) {
			seen++
			c.run(s, a, bad)
		}
		if a.has(isTaskKey) {
			seen++
			run := runAbove(s, byID)
			if run == nil {
				bad(s, "a task span without a run span above it")
			} else if id := a.str(semconv.CICDPipelineTaskRunIDKey); id != "" {
				k := taskID{run.SpanContext().SpanID(), id}
				if taskIDs[k] {
					bad(s, "cicd.pipeline.task.run.id %q is not unique within its run", id)
				}
				taskIDs[k] = true
			}
			c.task(s, a, run, bad)
		}
		if a.has(isCLIKey) {
			seen++
			c.cli(s, a, bad)
		}
		for k, v := range a {
			if strings.HasSuffix(string(k), ".url.full") {
				if u, err := url.Parse(v.String()); err != nil || !u.IsAbs() || u.Host == "" {
					bad(s, "%s %q is not an absolute URL", k, v.String())
				}
			}
		}
	}
	if seen == 0 {
		out = append(out, fmt.Sprintf("none of the %d spans carries the CI/CD or CLI conventions", len(spans)))
	}
	return out
}

type attrs map[attribute.Key]attribute.Value

func attrsOf(s sdktrace.ReadOnlySpan) attrs {
	a := attrs{}
	for _, kv := range s.Attributes() {
		a[kv.Key] = kv.Value
	}
	return a
}

func (a attrs) has(match func(attribute.Key) bool) bool {
	for k := range a {
		if match(k) {
			return true
		}
	}
	return false
}

func (a attrs) str(k attribute.Key) string {
	if v, ok := a[k]; ok && v.Type() == attribute.STRING {
		return v.AsString()
	}
	return ""
}

const (
	pipelinePrefix = "cicd.pipeline."
	taskPrefix     = "cicd.pipeline.task."
)

func isRunKey(k attribute.Key) bool {
	return strings.HasPrefix(string(k), pipelinePrefix) && !strings.HasPrefix(string(k), taskPrefix)
}

func isTaskKey(k attribute.Key) bool { return strings.HasPrefix(string(k), taskPrefix) }

func isCLIKey(k attribute.Key) bool {
	return k == semconv.ProcessExecutableNameKey || k == semconv.ProcessExitCodeKey || k == semconv.ProcessPIDKey
}

// The values the conventions allow, from semconv's own constants.
var (
	actionNames = values(semconv.CICDPipelineActionNameBuild, semconv.CICDPipelineActionNameRun, semconv.CICDPipelineActionNameSync)
	runResults  = []string{string(cicdconv.PipelineResultSuccess), string(cicdconv.PipelineResultFailure),
		string(cicdconv.PipelineResultError), string(cicdconv.PipelineResultTimeout),
		string(cicdconv.PipelineResultCancellation), string(cicdconv.PipelineResultSkip)}
	taskResults = values(semconv.CICDPipelineTaskRunResultSuccess, semconv.CICDPipelineTaskRunResultFailure,
		semconv.CICDPipelineTaskRunResultError, semconv.CICDPipelineTaskRunResultTimeout,
		semconv.CICDPipelineTaskRunResultCancellation, semconv.CICDPipelineTaskRunResultSkip)
	taskTypes = values(semconv.CICDPipelineTaskTypeBuild, semconv.CICDPipelineTaskTypeTest, semconv.CICDPipelineTaskTypeDeploy)
)

func values(kvs ...attribute.KeyValue) []string {
	out := make([]string, len(kvs))
	for i, kv := range kvs {
		out[i] = kv.Value.AsString()
	}
	return out
}

func (c *cicdCheck) run(s sdktrace.ReadOnlySpan, a attrs, bad func(sdktrace.ReadOnlySpan, string, ...any)) {
	if s.SpanKind() != trace.SpanKindServer {
		bad(s, "a run span of kind %v, want SERVER", s.SpanKind())
	}
	pipeline, action := a.str(semconv.CICDPipelineNameKey), a.str(semconv.CICDPipelineActionNameKey)
	if pipeline == "" {
		bad(s, "a run span without cicd.pipeline.name")
	}
	if !slices.Contains(actionNames, action) {
		bad(s, "cicd.pipeline.action.name %q, want one of %v", action, actionNames)
	}
	if want := action + " " + pipeline; s.Name() != want {
		bad(s, "a run span named %q, want {cicd.pipeline.action.name} {cicd.pipeline.name}: %q", s.Name(), want)
	}
	if a.str(semconv.CICDPipelineRunIDKey) == "" {
		bad(s, "a run span without cicd.pipeline.run.id")
	}
	result := a.str(semconv.CICDPipelineResultKey)
	if !slices.Contains(runResults, result) {
		bad(s, "cicd.pipeline.result %q, want one of %v", result, runResults)
	}
	if (result == string(cicdconv.PipelineResultFailure) || result == string(cicdconv.PipelineResultError)) &&
		a.str(semconv.ErrorTypeKey) == "" {
		bad(s, "result %s without error.type", result)
	}
	if (result == string(cicdconv.PipelineResultSuccess) || result == string(cicdconv.PipelineResultSkip)) &&
		s.Status().Code == codes.Error {
		bad(s, "result %s with status Error", result)
	}
}

// idLike matches what makes a span name high-cardinality: a UUID, a run
// of 16 or more hex digits, an instance key in brackets (a number or a
// quoted string, as in null_resource.a[0] or aws_instance.web["eu"]; a
// bracketed word such as "[web]" is a name's own).
var idLike = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[0-9a-fA-F]{16,}|\[(\d+|"[^"]*")\]`)

func (c *cicdCheck) task(s sdktrace.ReadOnlySpan, a attrs, run sdktrace.ReadOnlySpan, bad func(sdktrace.ReadOnlySpan, string, ...any)) {
	if s.SpanKind() != trace.SpanKindInternal {
		bad(s, "a task span of kind %v, want INTERNAL", s.SpanKind())
	}
	if a.str(semconv.CICDPipelineTaskNameKey) == "" {
		bad(s, "a task span without cicd.pipeline.task.name")
	}
	id := a.str(semconv.CICDPipelineTaskRunIDKey)
	if id == "" {
		bad(s, "a task span without cicd.pipeline.task.run.id")
	}
	if r := a.str(semconv.CICDPipelineTaskRunResultKey); !slices.Contains(taskResults, r) {
		bad(s, "cicd.pipeline.task.run.result %q, want one of %v", r, taskResults)
	}
	if ty := a.str(semconv.CICDPipelineTaskTypeKey); !slices.Contains(taskTypes, ty) {
		bad(s, "cicd.pipeline.task.type %q, want one of %v", ty, taskTypes)
	}
	name := s.Name()
	ids := []string{id, s.SpanContext().SpanID().String()}
	if run != nil {
		ids = append(ids, attrsOf(run).str(semconv.CICDPipelineRunIDKey))
	}
	for _, x := range ids {
		if x != "" && strings.Contains(name, x) {
			bad(s, "a task span's name holds the id %q: not low-cardinality", x)
		}
	}
	if m := idLike.FindString(name); m != "" {
		bad(s, "a task span's name holds %q: not low-cardinality", m)
	}
}

func (c *cicdCheck) cli(s sdktrace.ReadOnlySpan, a attrs, bad func(sdktrace.ReadOnlySpan, string, ...any)) {
	if s.SpanKind() != trace.SpanKindClient {
		bad(s, "a CLI span of kind %v, want CLIENT", s.SpanKind())
	}
	exe := a.str(semconv.ProcessExecutableNameKey)
	if exe == "" {
		bad(s, "a CLI span without process.executable.name")
	} else if s.Name() != exe {
		bad(s, "a CLI span named %q, want its executable's name %q", s.Name(), exe)
	}
	code, ok := a[semconv.ProcessExitCodeKey]
	if !ok || code.Type() != attribute.INT64 {
		bad(s, "a CLI span without an integer process.exit.code")
	} else if code.AsInt64() != 0 && a.str(semconv.ErrorTypeKey) == "" {
		bad(s, "exit code %d without error.type", code.AsInt64())
	}
	if pid, ok := a[semconv.ProcessPIDKey]; !ok || pid.Type() != attribute.INT64 {
		bad(s, "a CLI span without an integer process.pid")
	}
	if !c.allowArgs {
		for _, k := range []attribute.Key{semconv.ProcessCommandArgsKey, semconv.ProcessCommandLineKey, semconv.ProcessArgsCountKey} {
			if _, ok := a[k]; ok {
				bad(s, "a CLI span records %s: arguments only on request (AllowCommandArgs)", k)
			}
		}
	}
}

// runAbove returns the nearest run span above s in byID, or nil.
func runAbove(s sdktrace.ReadOnlySpan, byID map[trace.SpanID]sdktrace.ReadOnlySpan) sdktrace.ReadOnlySpan {
	for range len(byID) {
		p, ok := byID[s.Parent().SpanID()]
		if !ok || !s.Parent().IsValid() {
			return nil
		}
		if attrsOf(p).has(isRunKey) {
			return p
		}
		s = p
	}
	return nil
}
