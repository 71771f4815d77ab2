package terraform

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"

	otelprop "go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/propagation"
)

// ToolTracesEnv is the environment variable that turns the tool's own
// spans off when set to "off", "false" or "0" in the tool's environment
// (the driver's, or Command.Env); see WithToolTraces.
const ToolTracesEnv = "PROGRESSOTEL_TOOL_TRACES"

// defaultOTLPProtocol is the specification's default, which otelbridge
// uses (a test holds the two equal); OpenTofu's is gRPC, so the protocol
// is always spelt out for it.
const defaultOTLPProtocol = "http/protobuf"

// WithToolTraces sets whether Run passes the run's trace context and the
// OTLP settings to the tool, so that OpenTofu (1.10 and later) exports its
// own spans into the driver's trace, under the command span. It is on by
// default, and takes effect only when the tool's environment has an OTLP
// endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or _TRACES_ENDPOINT),
// OTEL_TRACES_EXPORTER is not "none", PROGRESSOTEL_TOOL_TRACES is not off,
// and the command span is sampled. Run only.
func WithToolTraces(on bool) Option {
	return adapter.Own(func(c *config) { c.toolTrace = on })
}

// toolTraceEnv returns env with, in place of what the tool would inherit,
// what makes OpenTofu export its spans into the run's trace: the exporter,
// the driver's protocol, the tool's service name and the command span's
// TRACEPARENT and TRACESTATE; env unchanged when tool traces are off.
func (d *decoder) toolTraceEnv(env []string, tool string) []string {
	seen := map[string]string{} // the value the tool would see: the last one
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		seen[k] = strings.TrimSpace(v)
	}
	sc := trace.SpanContextFromContext(d.cmdCtx)
	if !d.cfg.toolTrace || !sc.IsSampled() || seen["OTEL_TRACES_EXPORTER"] == "none" ||
		seen["OTEL_EXPORTER_OTLP_ENDPOINT"] == "" && seen["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] == "" ||
		slices.Contains([]string{"off", "false", "0"}, strings.ToLower(seen[ToolTracesEnv])) {
		return env
	}
	protocol := cmp.Or(seen["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"], seen["OTEL_EXPORTER_OTLP_PROTOCOL"], defaultOTLPProtocol)
	set := map[string]string{
		"OTEL_TRACES_EXPORTER":        "otlp",
		"OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
		"OTEL_SERVICE_NAME":           tool,
	}
	carrier := propagation.EnvCarrier{SetEnv: func(name, value string) { set[name] = value }}
	tc := otelprop.TraceContext{}
	for _, f := range tc.Fields() { // TRACEPARENT, TRACESTATE: replaced even when the span has no state
		carrier.Set(f, "")
	}
	tc.Inject(trace.ContextWithSpanContext(context.Background(), sc), carrier)

	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		_, replaced := set[k]
		return replaced
	})
	for _, k := range slices.Sorted(maps.Keys(set)) {
		if set[k] != "" {
			out = append(out, k+"="+set[k])
		}
	}
	return out
}
