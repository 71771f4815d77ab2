package prettyexporter

import (
	"io"
	"os"

	"github.com/progressotel/progressotel/internal/base/term"
)

// ColorMode chooses when the pretty exporter writes ANSI colours.
type ColorMode int

const (
	// ColorAuto colours only when the writer is a terminal (an *os.File that is a character
	// device) and TERM is not "dumb".
	ColorAuto ColorMode = iota
	// ColorNever writes plain text.
	ColorNever
	// ColorAlways colours whatever the writer is (e.g. a pager that understands ANSI).
	ColorAlways
)

// Option configures an Exporter, a JSONExporter or a LiveExporter. Options that do not apply
// to an exporter (colour and time layout for JSON, the live view's options for the other two)
// are ignored.
type Option func(*config)

type config struct {
	w          io.Writer
	color      ColorMode
	noTime     bool
	timeLayout string
	live       liveConfig // the live view's options: live_options.go
}

// WithWriter sets the destination. The default is os.Stderr for the pretty exporter and
// os.Stdout for the JSON exporter. A nil w keeps the default.
//
// Each Export call writes its whole batch with one Write (split only when a batch exceeds 256
// KiB), so lines from concurrent exporters sharing w never interleave mid-line if w's Write is
// atomic for that size.
func WithWriter(w io.Writer) Option {
	return func(c *config) {
		if w != nil {
			c.w = w
		}
	}
}

// WithColor sets the colour mode of the pretty exporter. Whatever the mode, no colour is
// written while the NO_COLOR environment variable is set to a non-empty value
// (https://no-color.org).
func WithColor(mode ColorMode) Option {
	return func(c *config) { c.color = mode }
}

// WithoutTime leaves the timestamp out: for deterministic examples and tests, or when a
// supervisor (systemd, kubectl logs --timestamps) adds its own.
func WithoutTime() Option {
	return func(c *config) { c.noTime = true }
}

// WithTimeLayout sets the time layout of the pretty exporter (a time.Format layout). The
// default is "15:04:05.000" in local time. The JSON exporter always writes RFC 3339 with
// milliseconds, in UTC.
func WithTimeLayout(layout string) Option {
	return func(c *config) {
		if layout != "" {
			c.timeLayout = layout
		}
	}
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
