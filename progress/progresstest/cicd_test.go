package progresstest_test

import (
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/progress/progresstest"
)

var traceID = trace.TraceID{1, 2, 3}

func sc(id byte) trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: trace.SpanID{id}, TraceFlags: trace.FlagsSampled})
}

// tree is a conforming run: a CLI span, its run span, two tasks and a
// host span below one (no convention).
func tree() tracetest.SpanStubs {
	return tracetest.SpanStubs{
		{Name: "tofu", SpanKind: trace.SpanKindClient, SpanContext: sc(1), Attributes: []attribute.KeyValue{
			attribute.String("process.executable.name", "tofu"), attribute.Int("process.exit.code", 1),
			attribute.Int("process.pid", 42), attribute.String("error.type", "1")}},
		{Name: "RUN apply", SpanKind: trace.SpanKindServer, SpanContext: sc(2), Parent: sc(1), Attributes: []attribute.KeyValue{
			attribute.String("cicd.pipeline.name", "apply"), attribute.String("cicd.pipeline.action.name", "RUN"),
			attribute.String("cicd.pipeline.run.id", "0200000000000000"), attribute.String("cicd.pipeline.result", "failure"),
			attribute.String("error.type", "INFRASTRUCTURE_ERROR"), attribute.String("cicd.pipeline.run.url.full", "https://ci.example/runs/1")},
			Status: sdktrace.Status{Code: codes.Error}},
		{Name: "create null_resource.a", SpanKind: trace.SpanKindInternal, SpanContext: sc(3), Parent: sc(2), Attributes: task("t1", "success")},
		{Name: "create null_resource.a", SpanKind: trace.SpanKindInternal, SpanContext: sc(4), Parent: sc(2), Attributes: task("t2", "failure")},
		{Name: "provision local-exec", SpanKind: trace.SpanKindInternal, SpanContext: sc(5), Parent: sc(4)},
	}
}

func task(id, result string) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String("cicd.pipeline.task.name", "create null_resource.a[0]"), attribute.String("cicd.pipeline.task.run.id", id),
		attribute.String("cicd.pipeline.task.run.result", result), attribute.String("cicd.pipeline.task.type", "deploy"),
	}
}

func TestCICDViolationsConforming(t *testing.T) {
	progresstest.CheckCICDSpans(t, tree().Snapshots())
	spans := tree()
	spans[2].Name = "task Configure [web] servers" // brackets of a name's own
	progresstest.CheckCICDSpans(t, spans.Snapshots())
}

// TestCICDViolations: each broken rule is reported, naming the span and
// the rule.
func TestCICDViolations(t *testing.T) {
	set := func(i int, kv ...attribute.KeyValue) func(tracetest.SpanStubs) {
		return func(s tracetest.SpanStubs) {
			for _, n := range kv {
				a := s[i].Attributes[:0:0]
				for _, o := range s[i].Attributes {
					if o.Key != n.Key {
						a = append(a, o)
					}
				}
				if n.Value.Type() != attribute.EMPTY {
					a = append(a, n)
				}
				s[i].Attributes = a
			}
		}
	}
	drop := func(k string) attribute.KeyValue { return attribute.KeyValue{Key: attribute.Key(k)} }
	for _, tc := range []struct {
		name, want string
		change     func(tracetest.SpanStubs)
		opts       []progresstest.CICDOption
	}{
		{"run kind", "want SERVER", func(s tracetest.SpanStubs) { s[1].SpanKind = trace.SpanKindInternal }, nil},
		{"run name", `want {cicd.pipeline.action.name} {cicd.pipeline.name}: "RUN apply"`, func(s tracetest.SpanStubs) { s[1].Name = "tofu apply" }, nil},
		{"action", `cicd.pipeline.action.name "DEPLOY"`, set(1, attribute.String("cicd.pipeline.action.name", "DEPLOY")), nil},
		{"no pipeline", "without cicd.pipeline.name", set(1, drop("cicd.pipeline.name")), nil},
		{"no run id", "without cicd.pipeline.run.id", set(1, drop("cicd.pipeline.run.id")), nil},
		{"result", `cicd.pipeline.result "failed"`, set(1, attribute.String("cicd.pipeline.result", "failed")), nil},
		{"no error.type", "result failure without error.type", set(1, drop("error.type")), nil},
		{"success with error", "result success with status Error", set(1, attribute.String("cicd.pipeline.result", "success")), nil},
		{"url", "is not an absolute URL", set(1, attribute.String("cicd.pipeline.run.url.full", "/runs/1")), nil},
		{"task kind", "want INTERNAL", func(s tracetest.SpanStubs) { s[2].SpanKind = trace.SpanKindServer }, nil},
		{"task name", "without cicd.pipeline.task.name", set(2, drop("cicd.pipeline.task.name")), nil},
		{"task id", "without cicd.pipeline.task.run.id", set(2, drop("cicd.pipeline.task.run.id")), nil},
		{"task id unique", `"t1" is not unique within its run`, set(3, attribute.String("cicd.pipeline.task.run.id", "t1")), nil},
		{"task result", `cicd.pipeline.task.run.result "ok"`, set(2, attribute.String("cicd.pipeline.task.run.result", "ok")), nil},
		{"task type", `cicd.pipeline.task.type ""`, set(2, drop("cicd.pipeline.task.type")), nil},
		{"task name key", `holds "[0]": not low-cardinality`, func(s tracetest.SpanStubs) { s[2].Name = "create null_resource.a[0]" }, nil},
		{"task name id", `holds the id "t1"`, func(s tracetest.SpanStubs) { s[2].Name = "task t1" }, nil},
		{"task name string key", `holds "[\"eu\"]"`, func(s tracetest.SpanStubs) { s[2].Name = `create aws_instance.web["eu"]` }, nil},
		{"task name uuid", `not low-cardinality`, func(s tracetest.SpanStubs) { s[2].Name = "task 02fc0000-0001-a76b-c916-000000000010" }, nil},
		{"task without run", "without a run span above it", func(s tracetest.SpanStubs) { s[2].Parent = sc(9) }, nil},
		{"cli kind", "want CLIENT", func(s tracetest.SpanStubs) { s[0].SpanKind = trace.SpanKindInternal }, nil},
		{"cli name", `want its executable's name "tofu"`, func(s tracetest.SpanStubs) { s[0].Name = "progressotel run" }, nil},
		{"cli exit code", "without an integer process.exit.code", set(0, attribute.String("process.exit.code", "1")), nil},
		{"cli pid", "without an integer process.pid", set(0, drop("process.pid")), nil},
		{"cli error.type", "exit code 1 without error.type", set(0, drop("error.type")), nil},
		{"cli args", "records process.command_args", set(0, attribute.StringSlice("process.command_args", []string{"tofu", "apply"})), nil},
		{"nothing", "none of the 1 spans carries", func(s tracetest.SpanStubs) { s[0] = tracetest.SpanStub{Name: "x"} }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spans := tree()
			tc.change(spans)
			if tc.name == "nothing" {
				spans = spans[:1]
			}
			got := progresstest.CICDViolations(spans.Snapshots(), tc.opts...)
			if len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), tc.want) {
				t.Errorf("violations %q, want one with %q", got, tc.want)
			}
		})
	}
	spans := tree()
	set(0, attribute.StringSlice("process.command_args", []string{"tofu", "apply"}))(spans)
	if got := progresstest.CICDViolations(spans.Snapshots(), progresstest.AllowCommandArgs()); len(got) != 0 {
		t.Errorf("with AllowCommandArgs: %q", got)
	}
}
