package ansible

import (
	"time"

	"github.com/progressotel/progressotel/adapter"
	kit "github.com/progressotel/progressotel/internal/kit/adapter"
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

// Option configures Run, Stream and RunCommandLine: the options every
// adapter has (adapter.WithRecorder, adapter.WithEnvelope, ...) and this
// package's own.
type Option = adapter.Option

type config struct {
	kit.Config // what every adapter has: see the With* functions

	keep    bool
	runner  string
	tempDir string
}

func newConfig(opts []Option) *config {
	c := &config{}
	kit.Configure(c, &c.Config, kit.Defaults{
		Name: "ansible", Scope: ScopeName, GracePeriod: DefaultGracePeriod, MaxLineBytes: DefaultMaxLineBytes,
	}, kit.Shared(adapter.Apply(c, opts...)))
	return c
}

// WithKeepArtifacts keeps the run's private directory (ansible-runner's
// artifacts: job events, the command line with the whole environment, the
// fact cache) after Run returns, and reports it in Result.ArtifactDir. By
// default it is removed, because it holds secrets. Run only.
func WithKeepArtifacts() Option {
	return adapter.Own(func(c *config) { c.keep = true })
}

// WithRunnerPath runs this ansible-runner executable instead of the one
// found on PATH. Run only.
func WithRunnerPath(path string) Option {
	return adapter.Own(func(c *config) { c.runner = path })
}

// WithTempDir creates the run's private directory under dir instead of the
// system's temporary directory. Run only.
func WithTempDir(dir string) Option {
	return adapter.Own(func(c *config) { c.tempDir = dir })
}
