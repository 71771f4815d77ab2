package adapter

import (
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/progress"
)

// Option configures an adapter's run. The options of this package are the
// ones every adapter has; an adapter ignores one it has no use for (kube
// has no grace period). An adapter's own options are made with Own.
// Options apply in order: of two that set the same thing, the later wins.
type Option func(*Settings)

// Settings is what the options set, for an adapter to read once it applied
// them. A zero field is unset: the adapter's default applies.
type Settings struct {
	Recorder       *progress.Recorder   // WithRecorder
	TracerProvider trace.TracerProvider // WithTracerProvider
	Envelope       progress.Envelope    // WithEnvelope
	Operation      string               // WithOperation
	Redactor       *progress.Redactor   // WithRedactor
	Logger         *slog.Logger         // WithLogger
	GracePeriod    time.Duration        // WithGracePeriod
	MaxLineBytes   int                  // WithMaxLineBytes
	// TaskURLTemplate is WithTaskURLTemplate's; nil: unset (the
	// environment's PROGRESSOTEL_TASK_URL_TEMPLATE).
	TaskURLTemplate *string
	// Own is the adapter's own configuration, which the options made
	// with Own change; the adapter sets it before applying them.
	Own any
}

// Own makes an adapter's own option: f changes the adapter's
// configuration, of type *C. Given to an adapter whose configuration is of
// another type, the option does nothing.
func Own[C any](f func(*C)) Option {
	return func(s *Settings) {
		if c, ok := s.Own.(*C); ok {
			f(c)
		}
	}
}

// WithRecorder records the events through r instead of progress.Default().
func WithRecorder(r *progress.Recorder) Option {
	return func(s *Settings) { s.Recorder = r }
}

// WithTracerProvider creates the spans with tp instead of the global
// TracerProvider.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(s *Settings) { s.TracerProvider = tp }
}

// WithEnvelope sets the envelope (component, resource, tenant scope) of
// the run's events, as a driver sets it on its own events. The kube
// adapter's objects carry their own resource, with this scope when their
// labels give none.
func WithEnvelope(env progress.Envelope) Option {
	return func(s *Settings) { s.Envelope = env }
}

// WithOperation names the operation of the common/OperationStarted,
// OperationCompleted and OperationFailed events and of the run's span,
// such as the lifecycle transition ("Install"). The default is the
// adapter's: the playbook's file name, the tofu subcommand, "Apply".
func WithOperation(name string) Option {
	return func(s *Settings) { s.Operation = name }
}

// WithRedactor gives the redactor the Recorder applies (default
// progress.DefaultRedactor()), so that the adapter agrees with it on what
// a secret is: the Recorder does the redaction of every event, and an
// adapter uses the redactor for what it handles itself (the free text of
// OpenTofu's output, Ansible's task arguments around secret keys).
func WithRedactor(r *progress.Redactor) Option {
	return func(s *Settings) { s.Redactor = r }
}

// WithLogger receives the adapter's own warnings: lines that are not the
// tool's messages, oversized lines, the tool's stderr, watch errors. The
// default is slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(s *Settings) { s.Logger = l }
}

// WithGracePeriod sets how long a cancelled run may take to stop after the
// polite signal (SIGTERM for Ansible, SIGINT for OpenTofu) before the
// adapter kills the tool and every process it started; zero or negative:
// the adapter's DefaultGracePeriod.
func WithGracePeriod(d time.Duration) Option {
	return func(s *Settings) { s.GracePeriod = d }
}

// WithMaxLineBytes bounds one line of the tool's output (default: the
// adapter's DefaultMaxLineBytes); a longer line is skipped, counted in the
// Result's SkippedLines and logged. Zero or negative: the default.
func WithMaxLineBytes(n int) Option {
	return func(s *Settings) { s.MaxLineBytes = n }
}

// WithTaskURLTemplate sets the link of each task span
// (cicd.pipeline.task.run.url.full, with the CI/CD conventions) in place
// of PROGRESSOTEL_TASK_URL_TEMPLATE: a URL with placeholders such as
// {run.id} and {task.id} (docs/conventions.md); "" leaves it out.
func WithTaskURLTemplate(tmpl string) Option {
	return func(s *Settings) { s.TaskURLTemplate = &tmpl }
}

// Apply applies opts in order (nil ones are skipped) to the Settings of an
// adapter whose own configuration is own (see Own), and returns them.
func Apply(own any, opts ...Option) Settings {
	s := Settings{Own: own}
	for _, o := range opts {
		if o != nil {
			o(&s)
		}
	}
	return s
}
