//go:build unix

package procctl

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// ownGroup starts cmd in a process group of its own, so that it and the
// helpers it starts can be signalled without touching the driver.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// leftoverWait bounds the wait for the processes of the Others groups
// after the child has exited, before they are killed.
const leftoverWait = 5 * time.Second

// stopRun stops a child that is still running and reports whether it was:
// false when it had exited before the signal. It returns when the child
// has exited and what it left behind has been killed: after Signal and
// the grace period, SIGKILL to its group and to the Others groups; once it
// has exited, the Others groups get what is left of a short wait, then
// SIGKILL, and its own group (what a provisioner's stopped shell left, say)
// SIGKILL.
//
// After the child has been reaped, its pid could in principle name a new
// group, but the kernel does not reuse a pid while a process group of that
// number has members, and with no members left there is nothing to kill:
// a new group would have to take the number in the moment between the
// reaping and the kill.
func (c *Child) stopRun() bool {
	select {
	case <-c.exited:
		return false
	default:
	}
	s, pid := c.stop, c.Cmd.Process.Pid
	groups := c.others()
	if err := c.signal(s.Signal); err != nil {
		if errors.Is(err, os.ErrProcessDone) || errors.Is(err, syscall.ESRCH) {
			return false
		}
		if s.OnSignalError != nil {
			s.OnSignalError(err)
		}
	}
	timer := time.NewTimer(s.Grace)
	defer timer.Stop()
	select {
	case <-c.exited:
	case <-timer.C:
		if s.OnGraceExpired != nil {
			s.OnGraceExpired()
		}
		groups = append(groups, c.others()...)
		killGroups(groups)
		c.killOwn(pid) // not reaped yet: its group is still its own
		<-c.exited
	}
	deadline := time.Now().Add(min(s.Grace, leftoverWait))
	for anyAlive(groups) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	killGroups(groups)
	c.killOwn(pid)
	// A SIGKILL takes effect asynchronously: wait, briefly, until the
	// killed groups have no member left, so that no process of the run is
	// still there when the caller is told the run is over.
	killed := groups
	if !c.stop.InheritGroup {
		killed = append(killed, pid)
	}
	for end := time.Now().Add(killWait); anyAlive(killed) && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// killWait bounds the wait for SIGKILLed groups to empty (a zombie that
// nothing reaps keeps its group alive).
const killWait = 2 * time.Second

// killOwn kills the child's group, or the child alone when it shares the
// caller's group.
func (c *Child) killOwn(pid int) {
	if c.stop.InheritGroup {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		return
	}
	killGroup(pid)
}

// deliver sends sig to each of the groups, or to p when there are none:
// to each whole group when whole is set (as a terminal does), else to the
// leader alone.
func deliver(p *os.Process, groups []int, sig os.Signal, whole bool) {
	ss, ok := sig.(syscall.Signal)
	if !ok {
		_ = p.Signal(sig)
		return
	}
	if len(groups) == 0 {
		groups = []int{p.Pid}
	}
	own := syscall.Getpgrp()
	for _, g := range groups {
		switch {
		case g <= 1 || g == own && g != p.Pid:
			continue
		case whole:
			_ = syscall.Kill(-g, ss)
		default:
			_ = syscall.Kill(g, ss)
		}
	}
}

// signal sends sig to the child, or to its group.
func (c *Child) signal(sig os.Signal) error {
	if sig == nil {
		sig = syscall.SIGKILL
	}
	if !c.stop.Group {
		return c.Cmd.Process.Signal(sig)
	}
	ss, ok := sig.(syscall.Signal)
	if !ok {
		return c.Cmd.Process.Signal(sig)
	}
	return syscall.Kill(-c.Cmd.Process.Pid, ss)
}

// others returns the Others groups, without this process's own group, the
// child's (signalled on its own) and the init group.
func (c *Child) others() []int {
	if c.stop.Others == nil {
		return nil
	}
	own, pid := syscall.Getpgrp(), c.Cmd.Process.Pid
	var gs []int
	for _, g := range c.stop.Others(pid) {
		if g > 1 && g != own && g != pid {
			gs = append(gs, g)
		}
	}
	return gs
}

func anyAlive(groups []int) bool {
	for _, g := range groups {
		if err := syscall.Kill(-g, 0); err == nil || errors.Is(err, syscall.EPERM) {
			return true
		}
	}
	return false
}

func killGroups(groups []int) {
	for _, g := range groups {
		killGroup(g)
	}
}

func killGroup(g int) { _ = syscall.Kill(-g, syscall.SIGKILL) }
