package otelbridge

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/progressotel/progressotel/prettyexporter"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/propagation"
)

// endpointVars are the OTLP endpoint variables Setup checks.
var endpointVars = []string{
	"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
	"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
}

// checkEndpoints returns an error naming the first endpoint variable that
// is not an http:// or https:// URL with a host. The SDK would log its
// own errors and send elsewhere (a scheme-less 127.0.0.1:4318 became
// https://localhost:4318: another port, and TLS).
func (c *config) checkEndpoints() error {
	for _, name := range endpointVars {
		v := strings.TrimSpace(c.getenv(name))
		if v == "" {
			continue
		}
		u, err := url.Parse(v)
		if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
			continue
		}
		hostPort := v
		if _, rest, ok := strings.Cut(v, "://"); ok {
			hostPort = rest
		}
		return fmt.Errorf("otelbridge: %s=%q is not an http:// or https:// URL: set it to http://%s (a collector without TLS, the usual local one) or https://%s (TLS); the protocol is OTEL_EXPORTER_OTLP_PROTOCOL's, not the scheme's",
			name, v, hostPort, hostPort)
	}
	return nil
}

// sdkDisabled reports OTEL_SDK_DISABLED=true (any case), the
// specification's switch that turns every signal into a no-op.
func (c *config) sdkDisabled() bool {
	return strings.EqualFold(strings.TrimSpace(c.getenv("OTEL_SDK_DISABLED")), "true")
}

// setupDisabled is Setup under OTEL_SDK_DISABLED=true: a LoggerProvider
// without processors is installed (records are accepted and dropped,
// quietly), a TracerProvider without processors (unless
// WithoutTracerProvider: spans keep real ids for the context a child
// process or a request inherits, and go nowhere), and no exporter or
// MeterProvider is built. The propagator is still installed: context
// reaching child processes and outgoing requests is not telemetry.
func (c *config) setupDisabled() *Telemetry {
	t := &Telemetry{lp: sdklog.NewLoggerProvider()}
	if !c.noTracer {
		t.tp = sdktrace.NewTracerProvider()
		otel.SetTracerProvider(t.tp)
	}
	otel.SetLoggerProvider(t.lp)
	progress.SetDefault(progress.NewRecorder(append([]progress.Option{
		progress.WithLoggerProvider(t.lp), progress.WithRedactor(c.red),
	}, c.recorderOpts...)...))
	if !c.noPropagator {
		otel.SetTextMapPropagator(propagation.Default())
	}
	return t
}

// countedProcessor counts the records a local view took as they were
// emitted (live, pretty): they count as exported in Telemetry.Stats.
type countedProcessor struct {
	sdklog.Processor
	n atomic.Int64
}

func (p *countedProcessor) OnEmit(ctx context.Context, r *sdklog.Record) error {
	err := p.Processor.OnEmit(ctx, r)
	if err == nil {
		p.n.Add(1)
	}
	return err
}

// maxOutputLine is the longest line jsonOutput holds before writing it.
const maxOutputLine = 64 << 10

// jsonOutput is Telemetry.Output with the json exporter: each line of the
// program's text becomes one JSON line, an ordinary log record whose
// message is the line, so that the stream stays one JSON object per line.
type jsonOutput struct {
	exp *prettyexporter.JSONExporter

	mu      sync.Mutex
	pending []byte
	closed  bool
}

// JSONLines says that this Output turns text into JSON lines: a wrapper
// such as progressotel run leaves its command's streams as they are
// rather than wrapping them.
func (*jsonOutput) JSONLines() bool { return true }

func (o *jsonOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return os.Stderr.Write(p)
	}
	o.pending = append(o.pending, p...)
	for {
		i := bytes.IndexByte(o.pending, '\n')
		if i < 0 {
			if len(o.pending) >= maxOutputLine {
				o.export(o.pending)
				o.pending = o.pending[:0]
			}
			return len(p), nil
		}
		o.export(o.pending[:i])
		o.pending = o.pending[i+1:]
	}
}

// close writes a last line without its newline; later writes go to stderr
// as they are (the exporter is shut down).
func (o *jsonOutput) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.pending) > 0 {
		o.export(o.pending)
		o.pending = nil
	}
	o.closed = true
}

func (o *jsonOutput) export(line []byte) {
	line = bytes.TrimSuffix(line, []byte("\r"))
	var r sdklog.Record
	now := time.Now()
	r.SetTimestamp(now)
	r.SetObservedTimestamp(now)
	r.SetSeverity(log.SeverityInfo)
	r.SetSeverityText("INFO")
	r.SetBody(attribute.StringValue(string(line)))
	_ = o.exp.Export(context.Background(), []sdklog.Record{r})
}
