package terraform

import (
	"context"
	"encoding/hex"
	"os"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/testkit/otlptest"
	"github.com/progressotel/progressotel/otelbridge"
)

// TestToolSpansInTheRunsTrace runs the real OpenTofu with an OTLP receiver
// (HTTP, then gRPC) as the driver's endpoint: the tool's own spans arrive there, in
// the run's trace, under the command span (their root's parent), named as
// the tool's service. With WithToolTraces(false), or
// PROGRESSOTEL_TOOL_TRACES=off in the tool's environment, the tool sends
// none. The driver's own environment is never changed.
func TestToolSpansInTheRunsTrace(t *testing.T) {
	bin := tofu(t)
	type receiver interface {
		ReceivedSpans() []otlptest.ReceivedSpan
	}
	httpReceiver := func(t *testing.T) (receiver, []string) {
		srv := otlptest.StartHTTP(t)
		return srv, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + srv.Addr}
	}
	for _, tc := range []struct {
		name     string
		receiver func(t *testing.T) (receiver, []string)
		env      []string
		opts     []Option
		want     bool
	}{
		{name: "http", receiver: httpReceiver, want: true},
		{name: "grpc", want: true, receiver: func(t *testing.T) (receiver, []string) {
			// The driver's traces protocol is gRPC by the signal's own
			// variable, which OpenTofu does not read.
			srv := otlptest.Start(t)
			return srv, []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://" + srv.Addr, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc"}
		}},
		{name: "option off", receiver: httpReceiver, opts: []Option{WithToolTraces(false)}},
		{name: "env off", receiver: httpReceiver, env: []string{ToolTracesEnv + "=off"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, endpoint := tc.receiver(t)
			c := newCapture(t)
			ctx, parent := c.parent(context.Background())
			env := append(offline(t), endpoint...)
			res, err := Run(ctx, Command{Binary: bin, Dir: workdir(t, "quiet"), Args: []string{"apply", "-var=pause=0"}, Init: true,
				Env: append(env, tc.env...)}, c.opts(append(tc.opts, WithHeartbeat(0))...)...)
			parent.End()
			checkRun(t, c, res)
			if err != nil || !res.OK() {
				t.Fatalf("Run: %v", err)
			}
			if os.Getenv("TRACEPARENT") != "" || os.Getenv("OTEL_TRACES_EXPORTER") != "" {
				t.Fatal("the driver's environment was changed")
			}
			// The tool flushes its spans before it exits, and Run returns
			// after it exited: what it sent is here.
			got := srv.ReceivedSpans()
			if !tc.want {
				if len(got) != 0 {
					t.Fatalf("%d spans of the tool's, want none", len(got))
				}
				return
			}
			if len(got) < 2 {
				t.Fatalf("%d spans of the tool's", len(got))
			}
			cmdSpan := only(t, c.spansNamed("tofu apply"))
			ours := map[string]bool{}
			for _, s := range c.spans.Ended() {
				if s.SpanContext().TraceID() != cmdSpan.SpanContext().TraceID() {
					continue
				}
				ours[s.SpanContext().SpanID().String()] = true
			}
			theirs := map[string]bool{}
			for _, s := range got {
				theirs[hex.EncodeToString(s.Span.GetSpanId())] = true
			}
			traceID := cmdSpan.SpanContext().TraceID()
			underCmd := 0
			for _, s := range got {
				parentID := hex.EncodeToString(s.Span.GetParentSpanId())
				switch {
				case trace.TraceID(s.Span.GetTraceId()) != traceID:
					t.Errorf("tool span %q is in trace %x, the run's is %s", s.Span.GetName(), s.Span.GetTraceId(), traceID)
				case s.Service != "tofu":
					t.Errorf("tool span %q of service %q", s.Span.GetName(), s.Service)
				case parentID == cmdSpan.SpanContext().SpanID().String():
					underCmd++
				case !theirs[parentID] && !ours[parentID]:
					t.Errorf("tool span %q has parent %s, neither the tool's nor the run's", s.Span.GetName(), parentID)
				}
			}
			if underCmd == 0 {
				names := []string{}
				for _, s := range got {
					names = append(names, s.Span.GetName())
				}
				t.Errorf("no tool span is a child of the command span: %v", names)
			}
		})
	}
}

// The tool's environment: replaced trace context, the protocol spelt out,
// nothing when the driver does not export traces over OTLP.
func TestToolTraceEnv(t *testing.T) {
	if defaultOTLPProtocol != otelbridge.DefaultOTLPProtocol {
		t.Fatalf("the default protocol %q is not otelbridge's %q", defaultOTLPProtocol, otelbridge.DefaultOTLPProtocol)
	}
	c := newCapture(t)
	d := newDecoder(context.Background(), newConfig(c.opts()), "apply", "tofu apply")
	d.begin(d.last)
	sc := trace.SpanContextFromContext(d.cmdCtx)
	stale := []string{"PATH=/bin", "TRACEPARENT=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "TRACESTATE=stale=1"}
	for _, tc := range []struct {
		name string
		env  []string
		want []string // nil: env unchanged
	}{
		{name: "no endpoint", env: stale},
		{name: "traces off", env: append(slices.Clone(stale), "OTEL_EXPORTER_OTLP_ENDPOINT=http://x:4318", "OTEL_TRACES_EXPORTER=none")},
		{name: "http", env: append(slices.Clone(stale), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://x:4318/v1/traces"), want: []string{
			"PATH=/bin", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://x:4318/v1/traces",
			"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_SERVICE_NAME=tofu", "OTEL_TRACES_EXPORTER=otlp",
			"TRACEPARENT=00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"}},
		{name: "grpc", env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://x:4317", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc"}, want: []string{
			"OTEL_EXPORTER_OTLP_ENDPOINT=http://x:4317", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc",
			"OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_SERVICE_NAME=tofu", "OTEL_TRACES_EXPORTER=otlp",
			"TRACEPARENT=00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"}},
	} {
		got := d.toolTraceEnv(tc.env, "tofu")
		want := tc.want
		if want == nil {
			want = tc.env
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n got %v\nwant %v", tc.name, got, want)
		}
	}
	if strings.Contains(strings.Join(os.Environ(), "\n"), sc.TraceID().String()) {
		t.Error("the trace context reached the driver's own environment")
	}
}
