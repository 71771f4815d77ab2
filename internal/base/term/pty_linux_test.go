package term

import (
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// openPty opens a pseudo-terminal pair (posix_openpt, unlockpt, ptsname)
// and returns its terminal side.
func openPty(t *testing.T) *os.File {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptm.Close() })
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pts.Close() })
	if err := unix.IoctlSetWinsize(int(pts.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: 120, Row: 40}); err != nil {
		t.Fatal(err)
	}
	return pts
}

// TestIsTerminalPty: a real terminal (a pseudo-terminal) is one, with its
// size.
func TestIsTerminalPty(t *testing.T) {
	pts := openPty(t)
	if !IsTerminal(pts) {
		t.Fatal("a pseudo-terminal is not taken for a terminal")
	}
	if w, h, ok := Size(pts); !ok || w != 120 || h != 40 {
		t.Fatalf("size %dx%d %v, want 120x40", w, h, ok)
	}
}
