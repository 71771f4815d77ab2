// Package term tells whether output goes to a terminal, and how big the
// terminal is: the pretty exporter colours only there, the live view draws
// its live area only on a real terminal, and otelbridge picks the live
// view there by default.
package term

import (
	"io"
	"os"

	xterm "golang.org/x/term"
)

// IsTerminal reports whether w is a character device. It is the cheap
// test for colour: a terminal is the only character device a program
// usually logs to (/dev/null is one too, and colour there harms nobody).
// Use Size to know whether cursor movement is safe.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Size returns the width and height, in cells, of the terminal w writes
// to. ok is false when w is not an *os.File on a real terminal (a pipe, a
// file, /dev/null) or the terminal reports no size.
func Size(w io.Writer) (width, height int, ok bool) {
	f, isFile := w.(*os.File)
	if !isFile || f == nil {
		return 0, 0, false
	}
	width, height, err := xterm.GetSize(int(f.Fd()))
	if err != nil || width <= 0 || height <= 0 {
		return 0, 0, false
	}
	return width, height, true
}
