//go:build !unix

package terraform

import (
	"os"
	"os/exec"
)

// prepare does nothing: without process groups, cancelling reaches the
// tool only.
func prepare(*exec.Cmd) {}

// interrupt asks the tool to stop; where the system cannot send it an
// interrupt, it is killed.
func interrupt(p *os.Process) error {
	if err := p.Signal(os.Interrupt); err != nil {
		return p.Kill()
	}
	return nil
}

// kill kills the tool (not the processes it started: there are no process
// groups here).
func kill(p *os.Process) error { return p.Kill() }

func exitCode(ps *os.ProcessState) int { return ps.ExitCode() }
