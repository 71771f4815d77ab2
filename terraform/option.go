package terraform

import (
	"time"

	"github.com/progressotel/progressotel/adapter"
	kit "github.com/progressotel/progressotel/internal/kit/adapter"
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

// Option configures Run, Stream and RunCommandLine: the options every
// adapter has (adapter.WithRecorder, adapter.WithEnvelope, ...) and this
// package's own.
type Option = adapter.Option

type config struct {
	kit.Config // what every adapter has: see the With* functions

	sensitive []string
	heartbeat time.Duration
	toolTrace bool
}

func newConfig(opts []Option) *config {
	c := &config{heartbeat: DefaultHeartbeat, toolTrace: true}
	kit.Configure(c, &c.Config, kit.Defaults{
		Name: "terraform", Scope: ScopeName, GracePeriod: DefaultGracePeriod, MaxLineBytes: DefaultMaxLineBytes,
	}, kit.Shared(adapter.Apply(c, opts...)))
	return c
}

// WithSensitiveValues names values that must never appear in any output,
// such as the values of sensitive variables that the driver passed to the
// tool itself. Each is replaced by wire.Redacted wherever it occurs in
// the events, spans, Result and errors. Values shorter than
// MinSensitiveValueLen bytes are ignored. Run adds the values of
// Command.SensitiveVars by itself.
func WithSensitiveValues(values ...string) Option {
	return adapter.Own(func(c *config) { c.sensitive = append(c.sensitive, values...) })
}

// WithHeartbeat sets how long a resource operation may go without a
// message about it before the adapter records a terraform/ApplyProgress of
// its own (details.source "adapter"), so that a watcher knows it is still
// running whatever the tool sends (default DefaultHeartbeat). Zero or
// negative turns the adapter's heartbeat off; the tool's own apply_progress
// messages are recorded either way.
func WithHeartbeat(d time.Duration) Option {
	return adapter.Own(func(c *config) { c.heartbeat = d })
}
