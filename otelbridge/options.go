package otelbridge

import (
	"io"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/progressotel/progressotel/progress"
)

// Exporter names accepted in OTEL_LOGS_EXPORTER and WithExporters.
const (
	ExporterLive    = "live"    // the live view (prettyexporter.LiveExporter), stderr: a tree per operation on a terminal, plain lines elsewhere
	ExporterCI      = "ci"      // the live view's CI format (prettyexporter.LiveCI), stderr: GitHub Actions' groups, or GitLab's sections when GITLAB_CI=true
	ExporterPretty  = "pretty"  // human lines (prettyexporter), stderr
	ExporterJSON    = "json"    // JSON lines (prettyexporter), stderr
	ExporterOTLP    = "otlp"    // OTLP, http/protobuf unless OTEL_EXPORTER_OTLP_PROTOCOL says grpc
	ExporterConsole = "console" // the SDK's stdoutlog, stderr
	ExporterNone    = "none"    // nothing
)

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
	noMeter        bool
	metricReaders  []sdkmetric.Reader
	red            *progress.Redactor
	recorderOpts   []progress.Option
	getenv         func(string) string
	stderrIsTerm   func() bool // tests
}

// WithExporters selects the log exporters by name, in place of
// OTEL_LOGS_EXPORTER: live, pretty, json, otlp, console, none, in any case.
func WithExporters(names ...string) Option {
	return func(c *config) { c.exporters = names }
}

// WithWriter sends the live, pretty, json and console output to w instead
// of stderr (WithWriter(os.Stdout) for a program whose stdout is its
// telemetry).
func WithWriter(w io.Writer) Option {
	return func(c *config) { c.writer = w }
}

// WithExporter adds an exporter, behind its own sdkparts.BatchProcessor.
func WithExporter(e sdklog.Exporter) Option {
	return func(c *config) { c.extraExporters = append(c.extraExporters, e) }
}

// WithProcessor adds a processor after the built-in ones (tracectx
// stamping) and before the exporters' processors. Use it for a
// SimpleProcessor in tests, or for filtering.
func WithProcessor(p sdklog.Processor) Option {
	return func(c *config) { c.processors = append(c.processors, p) }
}

// WithResource sets the driver's own resource attributes, such as its
// default service.name: OTEL_RESOURCE_ATTRIBUTES overrides them, and
// OTEL_SERVICE_NAME both, as with every OpenTelemetry SDK.
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
