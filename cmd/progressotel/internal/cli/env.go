package cli

import "github.com/progressotel/progressotel/cmd/progressotel/internal/handoff"

// envVar is an environment variable, for --help and docs/cli.md.
type envVar struct{ name, meaning string }

// exporterEnv are the OpenTelemetry variables every command reads through
// otelbridge.Setup.
var exporterEnv = []envVar{
	{"OTEL_LOGS_EXPORTER", "comma-separated exporters: live (a tree per operation on a terminal, the command's output above it), pretty, json, console (all on stderr, or --output: never in the command's stdout), otlp, none. Unset: otlp alone when an OTLP endpoint is set, else nothing is exported, with one warning"},
	{"OTEL_EXPORTER_OTLP_ENDPOINT", "the collector, e.g. http://127.0.0.1:4318; setting it alone exports OTLP and nothing locally (also OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, _TRACES_ENDPOINT)"},
	{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf (default) or grpc"},
	{"OTEL_EXPORTER_OTLP_HEADERS", "headers of every export, e.g. Authorization=Bearer%20... (also _INSECURE, _CERTIFICATE, _TIMEOUT)"},
	{"OTEL_SERVICE_NAME", "service.name of the resource (default: --component, else progressotel); OTEL_RESOURCE_ATTRIBUTES adds to it"},
	{"OTEL_BLRP_MAX_QUEUE_SIZE", "the batch processor's queue (and the other OTEL_BLRP_* settings)"},
	{"OTEL_SDK_DISABLED", "true: export nothing, quietly"},
	{"NO_COLOR", "no colour in the live view and the pretty format"},
}

// contextEnv are the variables the trace context is read from.
var contextEnv = []envVar{
	{"TRACEPARENT", "W3C trace context of the caller: the trace and parent span of what is recorded"},
	{"TRACESTATE", "W3C trace state, with TRACEPARENT"},
	{"BAGGAGE", "W3C baggage"},
	{"X_TRACECTX_<KEY>", "a tracectx value of the request, stamped as tracectx.<key> on every record: X_TRACECTX_TRANSACTIONID, X_TRACECTX_TENANTID, ... ('-', '.', '_' in a key are _2D, _2E, _5F)"},
}

var ownEnv = []envVar{
	{envOutput, "the default of --output"},
	{envShutdownTimeout, "the default of --shutdown-timeout (a Go duration: 5s, 500ms)"},
}

var emitEnv = concat(
	[]envVar{{handoff.EnvSocket, "set by 'progressotel run' for its child: the run's socket, through which the event goes"}},
	contextEnv, ownEnv, exporterEnv)

var runEnv = concat(contextEnv, ownEnv, exporterEnv,
	[]envVar{
		{"OTEL_TRACES_EXPORTER", "none: keep the run's spans local even when an OTLP endpoint is set"},
		{"(set for the child)", "TRACEPARENT, TRACESTATE, BAGGAGE and X_TRACECTX_* of the run's span, and " + handoff.EnvSocket + " for its emits"},
	})

func concat(lists ...[]envVar) []envVar {
	var out []envVar
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}
