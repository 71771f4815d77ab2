package ansible

import (
	"io"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

// DefaultGracePeriod is how long a cancelled run may take to stop after
// SIGTERM before it is killed.
const DefaultGracePeriod = 10 * time.Second

// ScopeName is the instrumentation scope of the adapter's spans.
const ScopeName = "github.com/progressotel/progressotel/ansible"

// Option configures Run and Stream.
type Option func(*config)

type config struct {
	recorder     *progress.Recorder
	tracer       trace.Tracer
	envelope     progress.Envelope
	operation    string
	redactor     *progress.Redactor
	logger       *slog.Logger
	grace        time.Duration
	keep         bool
	runner       string
	tempDir      string
	maxLineBytes int

	// rawTee receives every line read, unchanged. Tests use it to record
	// real streams; it is deliberately not an Option, since raw lines
	// hold raw event_data.
	rawTee io.Writer
}

func newConfig(opts []Option) *config {
	c := &config{grace: DefaultGracePeriod}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	if c.recorder == nil {
		c.recorder = progress.Default()
	}
	if c.tracer == nil {
		c.tracer = otel.GetTracerProvider().Tracer(ScopeName, trace.WithInstrumentationVersion(wire.ScopeVersion))
	}
	if c.redactor == nil {
		c.redactor = progress.DefaultRedactor()
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	return c
}

// WithRecorder records the events through r instead of progress.Default().
func WithRecorder(r *progress.Recorder) Option {
	return func(c *config) { c.recorder = r }
}

// WithTracerProvider creates the spans with tp instead of the global
// TracerProvider.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) {
		if tp != nil {
			c.tracer = tp.Tracer(ScopeName, trace.WithInstrumentationVersion(wire.ScopeVersion))
		}
	}
}

// WithEnvelope sets the envelope (component, resource, tenant scope) of
// every event, as a driver sets it on its own events.
func WithEnvelope(env progress.Envelope) Option {
	return func(c *config) { c.envelope = env }
}

// WithOperation names the operation of the common/OperationStarted,
// OperationCompleted and OperationFailed events, such as the lifecycle
// transition ("Install"). The default is the playbook's file name.
func WithOperation(name string) Option {
	return func(c *config) { c.operation = name }
}

// WithRedactor tells the adapter which redactor the Recorder applies
// (default progress.DefaultRedactor()). The Recorder does the redaction;
// the adapter only needs it to split task arguments conservatively around
// secret keys (see TaskStarted in the package documentation).
func WithRedactor(r *progress.Redactor) Option {
	return func(c *config) { c.redactor = r }
}

// WithLogger receives the adapter's own warnings: lines of the stream that
// are not job events, Ansible's warnings, oversized lines. The default is
// slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithGracePeriod sets how long Run waits, after cancelling the run with
// SIGTERM, before it kills ansible-runner and ansible-playbook. The default
// is DefaultGracePeriod.
func WithGracePeriod(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.grace = d
		}
	}
}

// WithKeepArtifacts keeps the run's private directory (ansible-runner's
// artifacts: job events, the command line with the whole environment, the
// fact cache) after Run returns, and reports it in Result.ArtifactDir. By
// default it is removed, because it holds secrets. Run only.
func WithKeepArtifacts() Option {
	return func(c *config) { c.keep = true }
}

// WithRunnerPath runs this ansible-runner executable instead of the one
// found on PATH. Run only.
func WithRunnerPath(path string) Option {
	return func(c *config) { c.runner = path }
}

// WithTempDir creates the run's private directory under dir instead of the
// system's temporary directory. Run only.
func WithTempDir(dir string) Option {
	return func(c *config) { c.tempDir = dir }
}

// WithMaxLineBytes bounds one event line (default DefaultMaxLineBytes); a
// longer line is skipped, counted in Result.SkippedLines and logged.
func WithMaxLineBytes(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxLineBytes = n
		}
	}
}
