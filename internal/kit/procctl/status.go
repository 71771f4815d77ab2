package procctl

import (
	"os"
	"syscall"
)

// SignalExitCode is the status a POSIX shell reports for a process killed
// by sig: 128+sig.
func SignalExitCode(sig syscall.Signal) int { return 128 + int(sig) }

// ExitCode is the shell's view of how a process ended: its exit status, or
// 128+n when signal n killed it (see SignalExitCode).
func ExitCode(ps *os.ProcessState) int { return ExitOf(ps).ExitCode() }

// Exit is how a process ended, as a shell sees it: its exit code, or the
// signal that killed it.
type Exit struct {
	// Code is the exit status when Signal is 0; -1 when the process did
	// not start.
	Code int
	// Signal is the signal that killed the process, 0 when it exited.
	Signal syscall.Signal
}

// ExitOf reads how a process ended; a nil ps (not started) is Code -1.
func ExitOf(ps *os.ProcessState) Exit {
	if ps == nil {
		return Exit{Code: -1}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return Exit{Signal: ws.Signal()}
	}
	return Exit{Code: ps.ExitCode()}
}

// ExitCode is the shell's view of e: the code, or 128+n for signal n.
func (e Exit) ExitCode() int {
	if e.Signal != 0 {
		return SignalExitCode(e.Signal)
	}
	return e.Code
}
