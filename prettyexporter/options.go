package prettyexporter

import (
	"cmp"
	"io"
	"os"
	"time"

	"github.com/progressotel/progressotel/internal/base/term"
)

// ColorMode chooses when the pretty exporter writes ANSI colours.
type ColorMode int

const (
	// ColorAuto colours only when the writer is a terminal (an *os.File that is a character device)
	// and TERM is not "dumb".
	ColorAuto ColorMode = iota
	// ColorNever writes plain text.
	ColorNever
	// ColorAlways colours whatever the writer is (e.g. a pager that understands ANSI).
	ColorAlways
)

// Option configures an Exporter, a JSONExporter or a LiveExporter. Options that do not apply to an
// exporter (colour and time layout for JSON, the live view's options for the other two) are
// ignored.
type Option func(*config)

type config struct {
	w          io.Writer
	color      ColorMode
	noTime     bool
	timeLayout string

	// The live view's.
	liveMode         LiveMode
	size             func() (width, height int)
	maxNodes, maxOps int
	now              func() time.Time // tests
}

// WithWriter sets the destination. The default is os.Stderr for the pretty exporter and os.Stdout
// for the JSON exporter. A nil w keeps the default.
//
// Each Export call writes its whole batch with one Write (split only when a batch exceeds 256 KiB),
// so lines from concurrent exporters sharing w never interleave mid-line if w's Write is atomic for
// that size.
func WithWriter(w io.Writer) Option {
	return func(c *config) {
		if w != nil {
			c.w = w
		}
	}
}

// WithColor sets the colour mode of the pretty exporter. Whatever the mode, no colour is written
// while the NO_COLOR environment variable is set to a non-empty value (https://no-color.org).
func WithColor(mode ColorMode) Option {
	return func(c *config) { c.color = mode }
}

// WithoutTime leaves the timestamp out: for deterministic examples and tests, or when a supervisor
// (systemd, kubectl logs --timestamps) adds its own.
func WithoutTime() Option {
	return func(c *config) { c.noTime = true }
}

// WithTimeLayout sets the time layout of the pretty exporter (a time.Format layout). The default is
// "15:04:05.000" in local time. The JSON exporter always writes RFC 3339 with milliseconds, in UTC.
func WithTimeLayout(layout string) Option {
	return func(c *config) { c.timeLayout = cmp.Or(layout, c.timeLayout) }
}

func newConfig(def io.Writer, opts []Option) config {
	c := config{w: def, timeLayout: defaultTimeLayout}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

const defaultTimeLayout = "15:04:05.000"

// useColor resolves a ColorMode for w and the environment.
func useColor(mode ColorMode, w io.Writer) bool {
	switch {
	case os.Getenv("NO_COLOR") != "" || mode == ColorNever:
		return false
	case mode == ColorAlways:
		return true
	}
	return os.Getenv("TERM") != "dumb" && term.IsTerminal(w)
}

// LiveMode chooses how the live exporter draws.
type LiveMode int

const (
	// LiveAuto draws the live area when the writer is a real terminal (an *os.File with a terminal
	// size) and TERM is not "dumb", and writes plain lines otherwise.
	LiveAuto LiveMode = iota
	// LiveTerminal always draws the live area, with cursor movement, for a writer that is a
	// terminal the program manages itself (a pty). The size comes from WithTerminalSize, else from
	// the terminal, else 80×24.
	LiveTerminal
	// LivePlain always writes plain lines: no cursor movement, one line per record with a header
	// line per operation, progress throttled and a heartbeat for long steps. What CI logs and pipes
	// get.
	LivePlain
	// LiveFlat writes one line per record in the pretty format (New's), in the order records, spans
	// and Output's lines came, nothing else: OTEL_LOGS_EXPORTER=pretty in otelbridge. Unlike New's
	// exporter it writes from its own goroutine, so that it can take records as they are emitted
	// (LogProcessor) without making a driver wait for the terminal.
	LiveFlat
	// LiveCI writes the CI format: plain lines folded per task or resource operation, in GitLab's
	// syntax (section_start and section_end) when GITLAB_CI=true, else in GitHub Actions' (::group::,
	// ::error and the step summary). LiveAuto chooses it when the writer is not a terminal and
	// GITHUB_ACTIONS=true or GITLAB_CI=true. docs/formats.md shows both.
	LiveCI
)

// String returns "auto", "terminal", "plain", "flat" or "ci".
func (m LiveMode) String() string {
	if m > LiveAuto && m <= LiveCI {
		return [...]string{"", "terminal", "plain", "flat", "ci"}[m]
	}
	return "auto"
}

// Defaults of the live view. Each bound keeps Export O(1) per record and the model's memory fixed,
// whatever a driver records.
const (
	// DefaultLiveMaxNodes bounds the nodes (spans' rows, condition streams) held across all
	// operations. Past it, new nodes are counted and shown as "… N more".
	DefaultLiveMaxNodes = 4096
	// DefaultLiveMaxOperations bounds the operation trees held at once; past it the least recently
	// updated one is printed above the live area and dropped from it.
	DefaultLiveMaxOperations = 64
	// liveFrameInterval is the shortest time between two frames: at most 10 frames a second.
	liveFrameInterval = 100 * time.Millisecond
	// liveMaxPending bounds the bytes waiting to be printed above the live area (or as plain lines)
	// while the writer does not keep up, as the model's notes estimate them: past it, whole notes
	// are dropped and counted.
	liveMaxPending = 1 << 20
)

// WithLiveMode sets the live exporter's mode (default LiveAuto). Whatever the mode, TERM=dumb gives
// plain lines, as a terminal that cannot move the cursor needs.
func WithLiveMode(mode LiveMode) Option {
	return func(c *config) { c.liveMode = mode }
}

// WithTerminalSize gives the live exporter the size of its terminal, in cells, for a writer whose
// size it cannot ask (a pty the program drives, a test). It is called before each frame, so a
// resize is followed. By default the size is asked of the terminal (an ioctl) before each frame,
// which needs no SIGWINCH handler in the program.
func WithTerminalSize(size func() (width, height int)) Option {
	return func(c *config) { c.size = size }
}

// WithLiveLimits bounds the live view's model: maxNodes nodes in all (default DefaultLiveMaxNodes)
// and maxOperations operation trees (default DefaultLiveMaxOperations). Values below 1 keep the
// default.
func WithLiveLimits(maxNodes, maxOperations int) Option {
	return func(c *config) {
		c.maxNodes = cmp.Or(max(maxNodes, 0), c.maxNodes)
		c.maxOps = cmp.Or(max(maxOperations, 0), c.maxOps)
	}
}
