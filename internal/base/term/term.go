// Package term tells whether output goes to a terminal, and how big the
// terminal is (for colours, the live view and its default).
package term

import (
	"io"
	"os"

	xterm "golang.org/x/term"
)

// IsTerminal reports whether w is a real terminal: an *os.File on which
// the terminal's own settings can be read (isatty). A file, a pipe and
// /dev/null are not, although /dev/null is a character device: output
// redirected to it must not be taken for a screen (`cmd >/dev/null`
// means the user does not want to see it).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	return xterm.IsTerminal(int(f.Fd()))
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
