//go:build unix

package procctl

import (
	"errors"
	"os"
	"os/exec"
	"slices"
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

// stopRun stops a child that is still running and reports whether it was
// (false: it had exited before the signal). It returns once the child has
// exited and what it left behind is killed: after Signal and the grace
// period, SIGKILL to its group and the Others groups; once it has exited,
// the Others groups get what is left of a short wait, then SIGKILL, and
// its own group (what a provisioner's stopped shell left) SIGKILL.
//
// A reaped child's pid cannot name a new group in the meantime: the kernel
// does not reuse a pid while a group of that number has members, and
// without members there is nothing to kill.
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
		killGroups(groups...)
		c.killOwn(pid) // not reaped yet: its group is still its own
		<-c.exited
	}
	deadline := time.Now().Add(min(s.Grace, leftoverWait))
	for anyAlive(groups) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	killGroups(groups...)
	c.killOwn(pid)
	// SIGKILL takes effect asynchronously: wait, briefly, until the killed
	// groups are empty, so that the run is over when the caller is told.
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
	killGroups(pid)
}

// deliver sends sig to each group (or to p when there are none): to the
// whole group when whole is set (as a terminal does), else to its leader.
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
	if ss, ok := sig.(syscall.Signal); ok && c.stop.Group {
		return syscall.Kill(-c.Cmd.Process.Pid, ss)
	}
	return c.Cmd.Process.Signal(sig)
}

// others returns the Others groups but this process's, the child's
// (signalled on its own) and init's.
func (c *Child) others() []int {
	if c.stop.Others == nil {
		return nil
	}
	own, pid := syscall.Getpgrp(), c.Cmd.Process.Pid
	return slices.DeleteFunc(slices.Clone(c.stop.Others(pid)), func(g int) bool {
		return g <= 1 || g == own || g == pid
	})
}

func anyAlive(groups []int) bool {
	for _, g := range groups {
		if err := syscall.Kill(-g, 0); err == nil || errors.Is(err, syscall.EPERM) {
			return true
		}
	}
	return false
}

func killGroups(groups ...int) {
	for _, g := range groups {
		_ = syscall.Kill(-g, syscall.SIGKILL)
	}
}
