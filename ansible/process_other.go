//go:build !unix

package ansible

import (
	"os"
	"os/exec"
	"time"
)

// runSupported: ansible-runner, like Ansible's control node, runs on POSIX
// systems only. Stream works everywhere.
const runSupported = false

func prepare(*exec.Cmd) {}

func exitCode(ps *os.ProcessState) int { return ps.ExitCode() }

func stopRun(p *os.Process, _ func() int, exited <-chan struct{}, _ time.Duration) bool {
	err := p.Kill()
	<-exited
	return err == nil
}
