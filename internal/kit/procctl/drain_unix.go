//go:build unix

package procctl

import (
	"io"
	"os"
	"syscall"
)

// DrainNow writes to dst what is in f, a pipe whose writer may stay open
// (a process a command left behind), without waiting for more: read by read
// until it is empty (EAGAIN) or closed. Stop a reader blocked on f with a
// passed deadline first, then clear it: with one set, a read fails before
// it is tried, whatever f holds.
func DrainNow(f *os.File, dst io.Writer) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	buf := make([]byte, 32<<10)
	for {
		n := 0
		_ = rc.Read(func(fd uintptr) bool {
			n, _ = syscall.Read(int(fd), buf)
			return true // one try: never wait
		})
		if n <= 0 {
			return
		}
		_, _ = dst.Write(buf[:n])
	}
}
