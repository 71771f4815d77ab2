package prettyexporter

import (
	"cmp"
	"time"
)

// LiveMode chooses how the live exporter draws.
type LiveMode int

const (
	// LiveAuto draws the live area when the writer is a real terminal (an *os.File with a
	// terminal size) and TERM is not "dumb", and writes plain lines otherwise.
	LiveAuto LiveMode = iota
	// LiveTerminal always draws the live area, with cursor movement, for a writer that is a
	// terminal the program manages itself (a pty). The size comes from WithTerminalSize, else
	// from the terminal, else 80×24.
	LiveTerminal
	// LivePlain always writes plain lines: no cursor movement, one line per record with a
	// header line per operation, progress throttled and a heartbeat for long steps. What CI
	// logs and pipes get.
	LivePlain
	// LiveFlat writes one line per record in the pretty format (New's), in the order records,
	// spans and Output's lines came, nothing else: OTEL_LOGS_EXPORTER=pretty in otelbridge.
	// Unlike New's exporter it writes from its own goroutine, so that it can take records as
	// they are emitted (LogProcessor) without making a driver wait for the terminal.
	LiveFlat
)

// String returns "auto", "terminal", "plain" or "flat".
func (m LiveMode) String() string {
	if m > LiveAuto && m <= LiveFlat {
		return [...]string{"", "terminal", "plain", "flat"}[m]
	}
	return "auto"
}

// Defaults of the live view. Each bound keeps Export O(1) per record and the model's memory
// fixed, whatever a driver records.
const (
	// DefaultLiveMaxNodes bounds the nodes (spans' rows, condition streams) held across all
	// operations. Past it, new nodes are counted and shown as "… N more".
	DefaultLiveMaxNodes = 4096
	// DefaultLiveMaxOperations bounds the operation trees held at once; past it the least
	// recently updated one is printed above the live area and dropped from it.
	DefaultLiveMaxOperations = 64
	// liveFrameInterval is the shortest time between two frames: at most 10 frames a second.
	liveFrameInterval = 100 * time.Millisecond
	// liveMaxPending bounds the bytes waiting to be printed above the live area (or as plain
	// lines) while the writer does not keep up: past it, whole lines are dropped and counted.
	liveMaxPending = 1 << 20
)

type liveConfig struct {
	mode     LiveMode
	size     func() (width, height int)
	maxNodes int
	maxOps   int
	now      func() time.Time // tests
}

// WithLiveMode sets the live exporter's mode (default LiveAuto). Whatever the mode, TERM=dumb
// gives plain lines, as a terminal that cannot move the cursor needs.
func WithLiveMode(mode LiveMode) Option {
	return func(c *config) { c.live.mode = mode }
}

// WithTerminalSize gives the live exporter the size of its terminal, in cells, for a writer
// whose size it cannot ask (a pty the program drives, a test). It is called before each frame,
// so a resize is followed. By default the size is asked of the terminal (an ioctl) before each
// frame, which needs no SIGWINCH handler in the program.
func WithTerminalSize(size func() (width, height int)) Option {
	return func(c *config) { c.live.size = size }
}

// WithLiveLimits bounds the live view's model: maxNodes nodes in all (default
// DefaultLiveMaxNodes) and maxOperations operation trees (default DefaultLiveMaxOperations).
// Values below 1 keep the default.
func WithLiveLimits(maxNodes, maxOperations int) Option {
	return func(c *config) {
		c.live.maxNodes = cmp.Or(max(maxNodes, 0), c.live.maxNodes)
		c.live.maxOps = cmp.Or(max(maxOperations, 0), c.live.maxOps)
	}
}
