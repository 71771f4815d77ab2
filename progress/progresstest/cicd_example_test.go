package progresstest_test

import (
	"context"
	"fmt"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/progress/progresstest"
)

// A driver's run span that forgot its result and its run id: in a test,
// progresstest.CheckCICDSpans(t, sr.Ended()) reports the same as errors.
func ExampleCICDViolations() {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	_, span := tp.Tracer("example").Start(context.Background(), "RUN deploy.yml",
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(semconv.CICDPipelineName("deploy.yml"), semconv.CICDPipelineActionNameRun))
	span.End()
	for _, v := range progresstest.CICDViolations(sr.Ended()) {
		_, rule, _ := strings.Cut(v, "): ") // after the span's name and id
		fmt.Println(rule)
	}
	// Output:
	// a run span without cicd.pipeline.run.id
	// cicd.pipeline.result "", want one of [success failure error timeout cancellation skip]
}
