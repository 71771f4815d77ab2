package cli

import (
	"os"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/progressotel/progressotel/cmd/progressotel/internal/handoff"
	"github.com/progressotel/progressotel/otelbridge"
)

// A run inside a run (a script that calls progressotel run again): the
// nested run hands the start and end of its spans to the enclosing run
// over the socket its emits use, so that the enclosing run's live view
// shows the nested operation, and what its adapter does, as rows of its
// own tree. The nested run still exports its spans itself.

// nestedExporters returns, inside an enclosing run (its socket in the
// environment) and without --output, the exporters of OTEL_LOGS_EXPORTER
// without the live view, which the nested run inherits from the
// enclosing one: there the enclosing run's view shows the nested run's
// spans as rows of its tree and their failures in its summary, while the
// nested run's own view, on a pipe to it, could only print plain lines
// through it. Its other exporters (OTLP, JSON lines, pretty lines, which
// the enclosing run does not show) stay as configured. ok is false when
// nothing changes.
func nestedExporters(o *commonOptions) (names []string, ok bool) {
	env := os.Getenv("OTEL_LOGS_EXPORTER")
	if os.Getenv(handoff.EnvSocket) == "" || o.output != "" {
		return nil, false
	}
	for _, n := range strings.Split(env, ",") {
		if n = strings.TrimSpace(n); strings.EqualFold(n, otelbridge.ExporterLive) {
			ok = true
		} else if n != "" {
			names = append(names, n)
		}
	}
	if !ok {
		return nil, false
	}
	if len(names) == 0 {
		names = []string{otelbridge.ExporterNone}
	}
	return names, true
}

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
