// Package term tells whether output goes to a terminal: the pretty
// exporter colours only there, and otelbridge picks the pretty format
// there by default.
package term

import (
	"io"
	"os"
)

// IsTerminal reports whether w is a character device. It needs no
// dependency: a terminal is the only character device a program usually
// logs to (/dev/null is one too, and colour there harms nobody).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
