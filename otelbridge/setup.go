package otelbridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutlog"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/progressotel/progressotel/prettyexporter"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/propagation"
)

// Exporter names accepted in OTEL_LOGS_EXPORTER and WithExporters.
const (
	ExporterPretty  = "pretty"  // human lines (prettyexporter), stderr
	ExporterJSON    = "json"    // JSON lines (prettyexporter), stdout
	ExporterOTLP    = "otlp"    // OTLP, gRPC unless OTEL_EXPORTER_OTLP_PROTOCOL says http/protobuf
	ExporterConsole = "console" // the SDK's stdoutlog, stdout
	ExporterNone    = "none"    // nothing
)

// localExportInterval is how often local (pretty, json, console) exporters
// flush: short, so a developer watches events live, but batched, so a
// driver never waits on a terminal.
const localExportInterval = 100 * time.Millisecond

// Option configures Setup.
type Option func(*config)

type config struct {
	exporters      []string
	writer         io.Writer
	extraExporters []sdklog.Exporter
	processors     []sdklog.Processor
	res            *resource.Resource
	noPropagator   bool
	noTracer       bool
	noSeedBody     bool
	red            *progress.Redactor
	recorderOpts   []progress.Option
	getenv         func(string) string
}

// WithExporters selects the log exporters by name, in place of
// OTEL_LOGS_EXPORTER: pretty, json, otlp, console, none.
func WithExporters(names ...string) Option {
	return func(c *config) { c.exporters = names }
}

// WithWriter sends the pretty, json and console output to w instead of
// stderr (pretty) and stdout (json, console).
func WithWriter(w io.Writer) Option {
	return func(c *config) { c.writer = w }
}

// WithExporter adds an exporter, behind its own BatchProcessor.
func WithExporter(e sdklog.Exporter) Option {
	return func(c *config) { c.extraExporters = append(c.extraExporters, e) }
}

// WithProcessor adds a processor after the built-in ones (tracectx
// stamping) and before the exporters' processors. Use it for a
// SimpleProcessor in tests, or for filtering.
func WithProcessor(p sdklog.Processor) Option {
	return func(c *config) { c.processors = append(c.processors, p) }
}

// WithResource sets the resource, merged over the one detected from
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
func WithResource(r *resource.Resource) Option {
	return func(c *config) { c.res = r }
}

// WithoutGlobalPropagator leaves the global TextMapPropagator alone. By
// default Setup installs propagation.Default(): W3C trace context, W3C
// baggage and the x-tracectx-* headers.
func WithoutGlobalPropagator() Option {
	return func(c *config) { c.noPropagator = true }
}

// WithoutTracerProvider leaves the global TracerProvider alone. By default
// Setup installs an SDK TracerProvider so spans have real ids, exporting
// them over OTLP when an OTLP endpoint is configured.
func WithoutTracerProvider() Option {
	return func(c *config) { c.noTracer = true }
}

// WithoutSeedBody sends OTLP records without the seed-000 body (see
// SeedBodyExporter): smaller payloads, for pipelines that do not need
// nested details.
func WithoutSeedBody() Option {
	return func(c *config) { c.noSeedBody = true }
}

// WithRedactor replaces the redaction of details and tracectx values.
func WithRedactor(r *progress.Redactor) Option {
	return func(c *config) { c.red = r }
}

// WithRecorderOptions configures the default progress.Recorder that Setup
// installs (progress.SetDefault).
func WithRecorderOptions(opts ...progress.Option) Option {
	return func(c *config) { c.recorderOpts = append(c.recorderOpts, opts...) }
}

// withEnv replaces os.Getenv, for tests.
func withEnv(getenv func(string) string) Option {
	return func(c *config) { c.getenv = getenv }
}

// Setup builds the SDK LoggerProvider, installs it as the global provider,
// installs the default progress Recorder bound to it, and (unless turned
// off) an SDK TracerProvider and the default propagator.
//
// Exporters come from WithExporters, else OTEL_LOGS_EXPORTER (a
// comma-separated list), else the default: pretty on stderr when stderr is
// a terminal and json on stdout otherwise, plus otlp when
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_LOGS_ENDPOINT is set.
//
// The returned shutdown flushes everything recorded before it and honours
// its context's deadline; it returns what could not be flushed as an error.
// After shutdown, Record calls are accepted and discarded without error.
func Setup(ctx context.Context, opts ...Option) (shutdown func(context.Context) error, err error) {
	c := config{getenv: os.Getenv}
	for _, o := range opts {
		o(&c)
	}
	if c.red == nil {
		c.red = progress.DefaultRedactor()
	}

	res, err := c.resource(ctx)
	if err != nil {
		return nil, err
	}
	names, err := c.exporterNames()
	if err != nil {
		return nil, err
	}

	popts := []sdklog.LoggerProviderOption{
		sdklog.WithResource(res),
		sdklog.WithProcessor(NewTraceCtxProcessor(c.red)),
	}
	for _, p := range c.processors {
		popts = append(popts, sdklog.WithProcessor(p))
	}
	var exporters []sdklog.Exporter
	var batches []*BatchProcessor
	closeAll := func() {
		for _, b := range batches {
			_ = b.Shutdown(context.Background())
		}
		for _, e := range exporters {
			_ = e.Shutdown(context.Background())
		}
	}
	for _, name := range names {
		exp, local, err := c.newExporter(ctx, name)
		if err != nil {
			closeAll()
			return nil, err
		}
		if exp == nil {
			continue
		}
		exporters = append(exporters, exp)
		batches = append(batches, c.batch(exp, name, local))
	}
	for _, exp := range c.extraExporters {
		batches = append(batches, NewBatchProcessor(exp, WithExporterName("extra")))
	}
	for _, b := range batches {
		popts = append(popts, sdklog.WithProcessor(b))
	}
	lp := sdklog.NewLoggerProvider(popts...)

	var tp *sdktrace.TracerProvider
	if !c.noTracer {
		tp, err = c.tracerProvider(ctx, res)
		if err != nil {
			_ = lp.Shutdown(context.Background())
			return nil, err
		}
		otel.SetTracerProvider(tp)
	}
	otel.SetLoggerProvider(lp)
	progress.SetDefault(progress.NewRecorder(append([]progress.Option{
		progress.WithLoggerProvider(lp), progress.WithRedactor(c.red),
	}, c.recorderOpts...)...))
	if !c.noPropagator {
		otel.SetTextMapPropagator(propagation.Default())
	}

	return func(ctx context.Context) error {
		var errs []error
		if tp != nil {
			if err := tp.Shutdown(ctx); err != nil {
				errs = append(errs, fmt.Errorf("otelbridge: trace shutdown: %w", err))
			}
		}
		if err := lp.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("otelbridge: log shutdown: %w", err))
		}
		// The provider skips its processors when ctx is done before they
		// are reached; shut them anyway, so that their goroutines end and
		// what they held is counted and reported as lost. After a normal
		// shutdown this is a no-op.
		for _, b := range batches {
			if err := b.Shutdown(ctx); err != nil {
				errs = append(errs, fmt.Errorf("otelbridge: log shutdown: %w", err))
			}
		}
		return errors.Join(errs...)
	}, nil
}

func (c *config) resource(ctx context.Context) (*resource.Resource, error) {
	detected, err := resource.New(ctx,
		resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithProcess())
	if err != nil && detected == nil {
		return nil, fmt.Errorf("otelbridge: resource: %w", err)
	}
	res, err := resource.Merge(resource.Default(), detected)
	if err != nil {
		res = detected // schema URL conflict: keep what was detected
	}
	if c.res != nil {
		merged, err := resource.Merge(res, c.res)
		if err != nil {
			return c.res, nil
		}
		res = merged
	}
	return res, nil
}

// exporterNames resolves the exporter list; see Setup.
func (c *config) exporterNames() ([]string, error) {
	names := c.exporters
	if names == nil {
		if env := strings.TrimSpace(c.getenv("OTEL_LOGS_EXPORTER")); env != "" {
			for _, n := range strings.Split(env, ",") {
				if n = strings.ToLower(strings.TrimSpace(n)); n != "" {
					names = append(names, n)
				}
			}
		}
	}
	if names == nil {
		if isTerminal(os.Stderr) && c.writer == nil {
			names = []string{ExporterPretty}
		} else {
			names = []string{ExporterJSON}
		}
		if c.getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || c.getenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT") != "" {
			names = append(names, ExporterOTLP)
		}
	}
	seen := map[string]bool{}
	out := names[:0:0]
	for _, n := range names {
		switch n {
		case ExporterPretty, ExporterJSON, ExporterOTLP, ExporterConsole, ExporterNone:
		default:
			return nil, fmt.Errorf("otelbridge: unknown log exporter %q in OTEL_LOGS_EXPORTER (want a comma-separated list of pretty, json, otlp, console, none)", n)
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// newExporter builds one exporter by name; local reports whether it writes
// to a local stream. A nil exporter means "none".
func (c *config) newExporter(ctx context.Context, name string) (exp sdklog.Exporter, local bool, err error) {
	switch name {
	case ExporterPretty:
		w := c.writer
		if w == nil {
			w = os.Stderr
		}
		exp, err = prettyexporter.New(prettyexporter.WithWriter(w))
		return exp, true, err
	case ExporterJSON:
		w := c.writer
		if w == nil {
			w = os.Stdout
		}
		exp, err = prettyexporter.NewJSON(prettyexporter.WithWriter(w))
		return exp, true, err
	case ExporterConsole:
		var o []stdoutlog.Option
		if c.writer != nil {
			o = append(o, stdoutlog.WithWriter(c.writer))
		}
		exp, err = stdoutlog.New(o...)
		return exp, true, err
	case ExporterOTLP:
		switch p := c.otlpProtocol("LOGS"); p {
		case "grpc":
			exp, err = otlploggrpc.New(ctx, grpcReconnect())
		case "http/protobuf":
			exp, err = otlploghttp.New(ctx)
		default:
			return nil, false, fmt.Errorf("otelbridge: unsupported OTLP protocol %q (want grpc or http/protobuf)", p)
		}
		if err != nil {
			return nil, false, fmt.Errorf("otelbridge: otlp log exporter: %w", err)
		}
		if !c.noSeedBody {
			exp = SeedBodyExporter(exp)
		}
		return exp, false, nil
	}
	return nil, false, nil
}

func (c *config) otlpProtocol(signal string) string {
	p := c.getenv("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL")
	if p == "" {
		p = c.getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if p == "" {
		p = "grpc"
	}
	return p
}

// batch puts exp behind a BatchProcessor, which counts and reports every
// record it loses (see drops.go) where the SDK's would only warn.
func (c *config) batch(exp sdklog.Exporter, name string, local bool) *BatchProcessor {
	o := []BatchOption{WithExporterName(name)}
	if local && c.getenv("OTEL_BLRP_SCHEDULE_DELAY") == "" {
		o = append(o, WithExportInterval(localExportInterval))
	}
	return NewBatchProcessor(exp, o...)
}

func (c *config) tracerProvider(ctx context.Context, res *resource.Resource) (*sdktrace.TracerProvider, error) {
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	endpoint := c.getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || c.getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	if endpoint && c.getenv("OTEL_TRACES_EXPORTER") != "none" {
		var (
			exp sdktrace.SpanExporter
			err error
		)
		switch p := c.otlpProtocol("TRACES"); p {
		case "grpc":
			exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithDialOption(grpc.WithConnectParams(reconnectParams)))
		case "http/protobuf":
			exp, err = otlptracehttp.New(ctx)
		default:
			return nil, fmt.Errorf("otelbridge: unsupported OTLP protocol %q (want grpc or http/protobuf)", p)
		}
		if err != nil {
			return nil, fmt.Errorf("otelbridge: otlp trace exporter: %w", err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	return sdktrace.NewTracerProvider(opts...), nil
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// reconnectParams cap gRPC's reconnect backoff at 5 seconds (gRPC's default
// grows to 120 s), so that logs and spans flow again soon after a collector
// comes back.
var reconnectParams = grpc.ConnectParams{
	Backoff:           backoff.Config{BaseDelay: time.Second, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 5 * time.Second},
	MinConnectTimeout: 10 * time.Second,
}

func grpcReconnect() otlploggrpc.Option {
	return otlploggrpc.WithDialOption(grpc.WithConnectParams(reconnectParams))
}
