package progress_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
)

// The envelope is set once for a scope of work; the common helpers' events
// carry it without a line more, and an event's own fields win.
func ExampleContextWithEnvelope() {
	sink := progresstest.NewSink()
	rec := sink.Recorder()

	ctx := progress.ContextWithEnvelope(context.Background(), progress.Envelope{
		Component: progress.Component{Name: "my-driver", Version: "1.0.0"},
		Resource:  progress.Resource{Type: "Network", ID: "net-1"},
		Scope:     map[string]string{"tenant": "acme"},
	})
	_ = rec.Record(ctx, progress.OperationStarted("Install"))
	sub := progress.OperationStarted("Install")
	sub.Resource.ID = "net-2" // this event is about another network
	_ = rec.Record(ctx, sub)

	for _, ev := range sink.Events() {
		fmt.Println(ev.ProgressEventType, ev.Component.Name, ev.Resource.Type, ev.Resource.ID, ev.Tenant)
	}
	// Output:
	// common/OperationStarted my-driver Network net-1 acme
	// common/OperationStarted my-driver Network net-2 acme
}

// A hand-written driver marks how each step ended, as the adapters do: the
// live view shows the step changed, skipped or ignored, and a trace backend
// can filter on progress.outcome.
func ExampleSetOutcome() {
	spans := tracetest.NewSpanRecorder()
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)).Tracer("my-driver")

	for _, step := range []struct {
		name    string
		outcome progress.Outcome
	}{
		{"write config", progress.OutcomeChanged},
		{"restart service", progress.OutcomeSkipped},
		{"warm cache", progress.OutcomeIgnored},
	} {
		_, span := tracer.Start(context.Background(), step.name)
		progress.SetOutcome(span, step.outcome)
		span.End()
	}

	for _, s := range spans.Ended() {
		for _, kv := range s.Attributes() {
			if kv.Key == "progress.outcome" {
				fmt.Println(s.Name(), kv.Value.AsString(), s.Status().Code)
			}
		}
	}
	// Output:
	// write config changed Unset
	// restart service skipped Unset
	// warm cache ignored Unset
}

// A failure that counts is the span's status Error too; an ignored one is
// not.
func ExampleSetOutcome_failed() {
	spans := tracetest.NewSpanRecorder()
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)).Tracer("my-driver")
	_, span := tracer.Start(context.Background(), "apply")
	progress.SetOutcome(span, progress.OutcomeFailed)
	span.End()
	s := spans.Ended()[0]
	fmt.Println(s.Attributes()[0].Value.AsString(), s.Status().Code)
	// Output:
	// failed Error
}
