//go:build unix

package ansible

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// runSupported: ansible-runner runs on POSIX systems only.
const runSupported = true

// prepare puts ansible-runner in a process group of its own, so that it
// and the helpers it forks can be signalled without touching the driver.
func prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// exitCode is the shell's view of how the process ended: its exit status,
// or 128+n when signal n killed it.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// stopRun stops a run that is still going (see stopper) and reports
// whether it was: false when ansible-runner had already exited.
func stopRun(p *os.Process, playbook func() int, exited <-chan struct{}, grace time.Duration) bool {
	select {
	case <-exited:
		return false
	default:
	}
	return stopper{proc: p, playbook: playbook, exited: exited, grace: grace}.stop()
}

// stopper stops a run: SIGTERM to ansible-runner, which stops
// ansible-playbook cleanly; after the grace period SIGKILL to every process
// group of the run. ansible-playbook runs in a session of its own (runner
// starts it on a pseudo-terminal), so killing runner alone would leave it
// running: its group is found from the pid in the events and, on Linux,
// from the process table while runner is still alive.
type stopper struct {
	proc     *os.Process // ansible-runner; its pid is its process group
	playbook func() int  // ansible-playbook's pid from the events, 0 if none yet
	exited   <-chan struct{}
	grace    time.Duration
}

// stop returns when the run's processes are gone, or after a last SIGKILL.
// It reports false when runner had exited before the SIGTERM.
func (s stopper) stop() bool {
	groups := s.groups()
	if errors.Is(s.proc.Signal(syscall.SIGTERM), os.ErrProcessDone) {
		return false
	}
	timer := time.NewTimer(s.grace)
	defer timer.Stop()
	select {
	case <-s.exited:
	case <-timer.C:
		groups = append(groups, s.groups()...)
		s.kill(groups)
		_ = syscall.Kill(-s.proc.Pid, syscall.SIGKILL) // runner has not been reaped: its group is still its own
		<-s.exited
	}
	// runner has exited; ansible-playbook and its workers get what is left
	// of a short wait, then SIGKILL.
	deadline := time.Now().Add(min(s.grace, 5*time.Second))
	for s.alive(groups) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	s.kill(groups)
	return true
}

// groups returns the process groups of the run other than runner's own:
// ansible-playbook's session and whatever else runner started.
func (s stopper) groups() []int {
	own := syscall.Getpgrp()
	var gs []int
	add := func(g int) {
		if g > 1 && g != own && g != s.proc.Pid {
			gs = append(gs, g)
		}
	}
	if pid := s.playbook(); pid > 0 {
		add(pid) // a session leader: its pid is its group
	}
	for _, g := range descendantGroups(s.proc.Pid) {
		add(g)
	}
	return gs
}

func (s stopper) alive(groups []int) bool {
	for _, g := range groups {
		if err := syscall.Kill(-g, 0); err == nil || errors.Is(err, syscall.EPERM) {
			return true
		}
	}
	return false
}

func (s stopper) kill(groups []int) {
	for _, g := range groups {
		_ = syscall.Kill(-g, syscall.SIGKILL)
	}
}
