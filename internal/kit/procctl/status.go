package procctl

import (
	"os"
	"syscall"
)

// KilledBy returns the signal that killed the process, 0 when it exited.
func KilledBy(ps *os.ProcessState) syscall.Signal {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal()
	}
	return 0
}

// SignalExitCode is the status a POSIX shell reports for a process killed
// by sig: 128+sig.
func SignalExitCode(sig syscall.Signal) int { return 128 + int(sig) }

// ExitCode is the shell's view of how a process ended: its exit status, or
// 128+n when signal n killed it (see SignalExitCode).
func ExitCode(ps *os.ProcessState) int {
	if sig := KilledBy(ps); sig != 0 {
		return SignalExitCode(sig)
	}
	return ps.ExitCode()
}
