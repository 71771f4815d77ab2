//go:build unix

package ansible

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// runSupported: ansible-runner runs on POSIX systems only.
const runSupported = true

// cleanStale removes the private directories under dir ("": the temporary
// directory) that runs of processes now gone left behind: a driver killed
// with SIGKILL cannot remove its own, which holds the extra variables and
// runner's artifacts. A directory is removed only when it is the current
// user's and its owner, whose pid its name holds (privateDirName), no
// longer exists; a directory of a live process, or of another user, stays.
// It assumes that the processes sharing dir share a pid namespace. The
// ansible-runner of a killed driver writes its last artifacts after the
// driver's death, while it stops the playbook: a directory it is still
// writing may survive a sweep, and the next run's sweep removes it.
func cleanStale(dir string) {
	if dir == "" {
		dir = os.TempDir()
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid := ownerOf(e.Name())
		if pid <= 0 || pid == os.Getpid() || !e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(path)
		if err != nil {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(path)
		}
	}
}

// ownerOf is the pid in a private directory's name, 0 for another name.
func ownerOf(name string) int {
	rest, ok := strings.CutPrefix(name, privatePrefix)
	if !ok {
		return 0
	}
	digits, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0
	}
	pid, err := strconv.Atoi(digits)
	if err != nil {
		return 0
	}
	return pid
}

// openStderrPipe makes a named pipe at path and opens it for reading. It
// is opened read-write, so that the open does not wait for a writer and no
// reader sees an end: launch reads it until the run has ended.
func openStderrPipe(path string) (*os.File, error) {
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		return nil, &os.PathError{Op: "mkfifo", Path: path, Err: err}
	}
	return os.OpenFile(path, os.O_RDWR, 0)
}
