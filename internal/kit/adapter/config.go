package adapter

import (
	"cmp"
	"io"
	"log/slog"
	"os"
	"reflect"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

// Defaults are what differ between the adapters' configurations.
type Defaults struct {
	Name         string        // prefixes the adapter's log messages ("ansible")
	Scope        string        // the instrumentation scope of the adapter's spans
	GracePeriod  time.Duration // the default of SetGracePeriod
	MaxLineBytes int           // the default of SetMaxLineBytes
}

// Config is the configuration every adapter has. An adapter embeds it in
// its own config, which its Option functions change.
type Config struct {
	Recorder  *progress.Recorder // records the events (progress.Default() unless set)
	Tracer    trace.Tracer       // makes the spans (from the global TracerProvider unless set)
	Envelope  progress.Envelope  // every event's envelope
	Operation string             // the operation of the common events; "": the adapter's default
	// Redactor is the Recorder's, for the adapter's own redaction of free
	// text (progress.DefaultRedactor() unless set).
	Redactor *progress.Redactor
	Logger   *slog.Logger // the adapter's warnings (slog.Default() unless set)
	// GracePeriod is how long a cancelled run may take to stop after the
	// polite signal before it is killed; always positive.
	GracePeriod  time.Duration
	MaxLineBytes int // bounds one line of the tool's output; always positive
	// RawTee receives every line read, unchanged (tests record real streams
	// with it); not an Option, since raw lines hold what redaction removes.
	RawTee io.Writer
	// Display, when set, receives the tool's own text as the tool would
	// have shown it (see Show), from the one read of its stream.
	Display io.Writer

	// Semconv chooses the span conventions (SemconvEnv unless set).
	Semconv Semconv
	// TaskURLTemplate and RunURLTemplate are the templates of
	// cicd.pipeline.task.run.url.full (TaskURLTemplateEnv unless set) and
	// cicd.pipeline.run.url.full (RunURLTemplateEnv); "": none.
	TaskURLTemplate, RunURLTemplate string

	name, scope            string
	recordErrs             int
	semconvSet, taskURLSet bool
	meterProvider          metric.MeterProvider
	metrics                *runMetrics
}

// Shared is what the options every adapter has set: the public
// adapter.Settings field for field, so that an adapter converts one into
// the other (kit.Shared(settings)) and the compiler keeps them equal. This
// package does not import that one, which builds on it.
type Shared struct {
	Recorder        *progress.Recorder
	TracerProvider  trace.TracerProvider
	Envelope        progress.Envelope
	Operation       string
	Redactor        *progress.Redactor
	Logger          *slog.Logger
	GracePeriod     time.Duration
	MaxLineBytes    int
	TaskURLTemplate *string
	Own             any
}

// Configure fills c, the adapter's own config whose common part is
// common, from the defaults, then the own options in order (nil ones are
// skipped), then what the shared options set (s: a zero field is unset),
// then fills what none set.
func Configure[C any](c *C, common *Config, d Defaults, s Shared, opts ...func(*C)) {
	common.name, common.scope = d.Name, d.Scope
	common.GracePeriod, common.MaxLineBytes = d.GracePeriod, d.MaxLineBytes
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	if s.Recorder != nil {
		common.SetRecorder(s.Recorder)
	}
	common.SetTracerProvider(s.TracerProvider)
	if !reflect.ValueOf(s.Envelope).IsZero() {
		common.SetEnvelope(s.Envelope)
	}
	if s.Operation != "" {
		common.SetOperation(s.Operation)
	}
	if s.Redactor != nil {
		common.SetRedactor(s.Redactor)
	}
	if s.Logger != nil {
		common.SetLogger(s.Logger)
	}
	common.SetGracePeriod(s.GracePeriod)
	common.SetMaxLineBytes(s.MaxLineBytes)
	if s.TaskURLTemplate != nil {
		common.SetTaskURLTemplate(*s.TaskURLTemplate)
	}
	if common.Recorder == nil {
		common.Recorder = progress.Default()
	}
	if common.Tracer == nil {
		common.SetTracerProvider(otel.GetTracerProvider())
	}
	if common.Redactor == nil {
		common.Redactor = progress.DefaultRedactor()
	}
	common.Logger = cmp.Or(common.Logger, slog.Default())
	if !common.semconvSet {
		common.Semconv = ParseSemconv(os.Getenv(SemconvEnv))
	}
	if !common.taskURLSet {
		common.TaskURLTemplate = os.Getenv(TaskURLTemplateEnv)
	}
	common.RunURLTemplate = os.Getenv(RunURLTemplateEnv)
	for _, t := range []*string{&common.TaskURLTemplate, &common.RunURLTemplate} {
		if *t != "" && !checkURLTemplate(*t) {
			common.Logger.Warn(common.name+": a URL template that does not make an absolute URL is ignored", "template", *t)
			*t = ""
		}
	}
	var err error
	common.metrics, err = newRunMetrics(cmp.Or(common.meterProvider, otel.GetMeterProvider()), common.scope)
	if err != nil {
		common.Logger.Warn(common.name+": the run metrics are off", "error", err.Error())
	}
}

// SetMeterProvider records the run metrics with mp; nil: the global
// MeterProvider (otelbridge.Setup installs one).
func (c *Config) SetMeterProvider(mp metric.MeterProvider) { c.meterProvider = mp }

// SetRecorder records the events through r; nil: progress.Default().
func (c *Config) SetRecorder(r *progress.Recorder) { c.Recorder = r }

// SetTracerProvider makes the spans with tp, under the adapter's scope
// and the module's version; nil is ignored.
func (c *Config) SetTracerProvider(tp trace.TracerProvider) {
	if tp != nil {
		c.Tracer = tp.Tracer(c.scope, trace.WithInstrumentationVersion(wire.ScopeVersion))
	}
}

// SetEnvelope sets every event's envelope.
func (c *Config) SetEnvelope(env progress.Envelope) { c.Envelope = env }

// SetOperation names the operation of the common events.
func (c *Config) SetOperation(name string) { c.Operation = name }

// SetRedactor sets the redactor; nil: progress.DefaultRedactor().
func (c *Config) SetRedactor(r *progress.Redactor) { c.Redactor = r }

// SetLogger sets the logger of the adapter's warnings; nil: slog.Default().
func (c *Config) SetLogger(l *slog.Logger) { c.Logger = l }

// SetGracePeriod sets the grace period; zero or negative is ignored.
func (c *Config) SetGracePeriod(d time.Duration) {
	if d > 0 {
		c.GracePeriod = d
	}
}

// SetMaxLineBytes bounds one line; zero or negative is ignored.
func (c *Config) SetMaxLineBytes(n int) {
	if n > 0 {
		c.MaxLineBytes = n
	}
}
