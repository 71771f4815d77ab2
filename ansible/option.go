package ansible

import (
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/kit/adapter"
	"github.com/progressotel/progressotel/progress"
)

// DefaultGracePeriod is how long a cancelled run may take to stop after
// SIGTERM before it is killed.
const DefaultGracePeriod = 10 * time.Second

// ScopeName is the instrumentation scope of the adapter's spans.
const ScopeName = "github.com/progressotel/progressotel/ansible"

// DefaultMaxLineBytes is the longest event line read by default: far above
// what ansible-runner writes (it drops a result above about 700 KB, but the
// event's display text repeats big values, so lines of 1–2 MB are real),
// and low enough that a runaway line cannot take the driver's memory.
const DefaultMaxLineBytes = 64 << 20

// Option configures Run and Stream.
type Option func(*config)

type config struct {
	adapter.Config // what every adapter has: see the With* functions

	keep    bool
	runner  string
	tempDir string
}

func newConfig(opts []Option) *config {
	c := &config{}
	adapter.Configure(c, &c.Config, adapter.Defaults{
		Name: "ansible", Scope: ScopeName, GracePeriod: DefaultGracePeriod, MaxLineBytes: DefaultMaxLineBytes,
	}, opts)
	return c
}

// WithTaskURLTemplate sets the link of each task span
// (cicd.pipeline.task.run.url.full, with the CI/CD conventions) in place
// of PROGRESSOTEL_TASK_URL_TEMPLATE: a URL with placeholders such as
// {run.id} and {task.id} (docs/conventions.md); "" leaves it out.
func WithTaskURLTemplate(tmpl string) Option { return func(c *config) { c.SetTaskURLTemplate(tmpl) } }

// WithRecorder records the events through r instead of progress.Default().
func WithRecorder(r *progress.Recorder) Option {
	return func(c *config) { c.SetRecorder(r) }
}

// WithTracerProvider creates the spans with tp instead of the global
// TracerProvider.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.SetTracerProvider(tp) }
}

// WithEnvelope sets the envelope (component, resource, tenant scope) of
// every event, as a driver sets it on its own events.
func WithEnvelope(env progress.Envelope) Option {
	return func(c *config) { c.SetEnvelope(env) }
}

// WithOperation names the operation of the common/OperationStarted,
// OperationCompleted and OperationFailed events, such as the lifecycle
// transition ("Install"). The default is the playbook's file name.
func WithOperation(name string) Option {
	return func(c *config) { c.SetOperation(name) }
}

// WithRedactor tells the adapter which redactor the Recorder applies
// (default progress.DefaultRedactor()). The Recorder does the redaction;
// the adapter only needs it to split task arguments conservatively around
// secret keys (see TaskStarted in the package documentation).
func WithRedactor(r *progress.Redactor) Option {
	return func(c *config) { c.SetRedactor(r) }
}

// WithLogger receives the adapter's own warnings: lines of the stream that
// are not job events, Ansible's warnings, oversized lines. The default is
// slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.SetLogger(l) }
}

// WithGracePeriod sets how long Run waits, after cancelling the run with
// SIGTERM, before it kills ansible-runner and ansible-playbook. The default
// is DefaultGracePeriod.
func WithGracePeriod(d time.Duration) Option {
	return func(c *config) { c.SetGracePeriod(d) }
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
	return func(c *config) { c.SetMaxLineBytes(n) }
}
