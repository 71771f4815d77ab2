package cli

import (
	"os"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/progressotel/progressotel/cmd/progressotel/internal/handoff"
)

// A run inside a run (a script that calls progressotel run again): the
// nested run hands the start and end of its spans to the enclosing run
// over the socket its emits use, so that the enclosing run's live view
// shows the nested operation, and what its adapter does, as rows of its
// own tree. The nested run still exports its spans itself.

// handSpansOver registers, inside an enclosing run, the processor that
// hands this run's spans to it. Call it before the run's span starts.
func (t *telemetry) handSpansOver() {
	path := os.Getenv(handoff.EnvSocket)
	if t == nil || path == "" {
		return
	}
	if tp := t.tel.TracerProvider(); tp != nil {
		tp.RegisterSpanProcessor(handoff.NewSpanForwarder(path))
	}
}

// localSpans is where the spans a nested run hands over go: the run's
// live view, when it has one.
func (t *telemetry) localSpans() sdktrace.SpanProcessor {
	if t == nil {
		return nil
	}
	return t.tel.LocalSpanProcessor()
}
