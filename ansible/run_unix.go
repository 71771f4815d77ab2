//go:build unix

package ansible

import (
	"os"
	"syscall"
)

// runSupported: ansible-runner runs on POSIX systems only.
const runSupported = true

// openStderrPipe makes a named pipe at path and opens it for reading. It
// is opened read-write, so that the open does not wait for a writer and no
// reader sees an end: launch reads it until the run has ended.
func openStderrPipe(path string) (*os.File, error) {
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		return nil, &os.PathError{Op: "mkfifo", Path: path, Err: err}
	}
	return os.OpenFile(path, os.O_RDWR, 0)
}
