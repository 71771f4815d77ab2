package terraform

import (
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/kit/adapter"
	"github.com/progressotel/progressotel/progress"
)

// ScopeName is the instrumentation scope of the adapter's spans.
const ScopeName = "github.com/progressotel/progressotel/terraform"

// DefaultGracePeriod is how long a cancelled run may take to stop after
// SIGINT before it is killed. The tool uses it to finish the resource
// operations under way and to write its state: killing it earlier can leave
// real resources that the state does not know about.
const DefaultGracePeriod = 30 * time.Second

// DefaultMaxLineBytes bounds one line of the tool's output. An outputs
// message holds every root output's value on one line, so it is large.
const DefaultMaxLineBytes = 8 << 20

// Option configures Run and Stream.
type Option func(*config)

type config struct {
	adapter.Config // what every adapter has: see the With* functions

	sensitive []string
	heartbeat time.Duration
	toolTrace bool
}

func newConfig(opts []Option) *config {
	c := &config{heartbeat: DefaultHeartbeat, toolTrace: true}
	adapter.Configure(c, &c.Config, adapter.Defaults{
		Name: "terraform", Scope: ScopeName, GracePeriod: DefaultGracePeriod, MaxLineBytes: DefaultMaxLineBytes,
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
// OperationCompleted and OperationFailed events and of the command span,
// such as the lifecycle transition ("Install"). The default is Run's
// subcommand ("apply"), or "terraform" for Stream.
func WithOperation(name string) Option {
	return func(c *config) { c.SetOperation(name) }
}

// WithRedactor sets the redactor applied to free text: provisioner output
// lines, diagnostics, log messages and the tool's stderr (default
// progress.DefaultRedactor()). Give the one the Recorder uses, so that both
// agree on what a secret is. See the package documentation, "Sensitive
// values".
func WithRedactor(r *progress.Redactor) Option {
	return func(c *config) { c.SetRedactor(r) }
}

// WithSensitiveValues names values that must never appear in any output,
// such as the values of sensitive variables that the driver passed to the
// tool itself. Each is replaced by wire.Redacted wherever it occurs in
// the events, spans, Result and errors. Values shorter than
// MinSensitiveValueLen bytes are ignored. Run adds the values of
// Command.SensitiveVars by itself.
func WithSensitiveValues(values ...string) Option {
	return func(c *config) { c.sensitive = append(c.sensitive, values...) }
}

// WithLogger receives the adapter's own warnings: lines that are not
// messages, oversized lines, the tool's stderr. The default is
// slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.SetLogger(l) }
}

// WithGracePeriod sets how long Run waits, after cancelling the tool with
// SIGINT, before it kills it and every process it started. The default is
// DefaultGracePeriod. Run only.
func WithGracePeriod(d time.Duration) Option {
	return func(c *config) { c.SetGracePeriod(d) }
}

// WithMaxLineBytes bounds one line of output (default DefaultMaxLineBytes);
// a longer line is skipped, counted in Result.SkippedLines and logged.
func WithMaxLineBytes(n int) Option {
	return func(c *config) { c.SetMaxLineBytes(n) }
}

// WithHeartbeat sets how long a resource operation may go without a
// message about it before the adapter records a terraform/ApplyProgress of
// its own (details.source "adapter"), so that a watcher knows it is still
// running whatever the tool sends (default DefaultHeartbeat). Zero or
// negative turns the adapter's heartbeat off; the tool's own apply_progress
// messages are recorded either way.
func WithHeartbeat(d time.Duration) Option {
	return func(c *config) { c.heartbeat = d }
}
