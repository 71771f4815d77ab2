//go:build unix

package terraform

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// prepare starts the tool in a process group of its own, so that a
// cancellation reaches the tool and every process it started (provider
// plugins, provisioner commands) and nothing else.
func prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// interrupt sends SIGINT to the tool's process group, as Ctrl-C in a
// terminal does: the tool stops gracefully (it finishes the operations
// under way and writes its state); provider plugins ignore it and leave the
// stopping to the tool; provisioner commands are interrupted.
func interrupt(p *os.Process) error {
	return ignoreGone(syscall.Kill(-p.Pid, syscall.SIGINT))
}

// kill sends SIGKILL to the tool's process group: the tool, if it is still
// there, and every process left in its group.
//
// After the tool has been reaped, its pid could in principle name a new
// group, but the kernel does not reuse a pid while a process group of that
// number has members, and with no members left there is nothing to kill: a
// new group would have to take the number in the moment between the reaping
// and this call.
func kill(p *os.Process) error {
	return ignoreGone(syscall.Kill(-p.Pid, syscall.SIGKILL))
}

func ignoreGone(err error) error {
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// exitCode returns the exit status, 128+n for a process killed by signal
// n, as a shell reports it.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}
