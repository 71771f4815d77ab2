//go:build !unix

package procctl

import (
	"cmp"
	"errors"
	"os"
	"os/exec"
	"time"
)

// ownGroup does nothing: without process groups, a stop reaches the child
// only.
func ownGroup(*exec.Cmd) {}

// stopRun asks the child to stop (it is killed where the system cannot
// send it Signal), waits the grace period, then kills it. The processes it
// started are not reached: there are no process groups here.
func (c *Child) stopRun() bool {
	select {
	case <-c.exited:
		return false
	default:
	}
	p := c.Cmd.Process
	err := p.Signal(cmp.Or[os.Signal](c.stop.Signal, os.Kill))
	if err != nil && !errors.Is(err, os.ErrProcessDone) {
		err = p.Kill()
	}
	if errors.Is(err, os.ErrProcessDone) {
		return false
	}
	if err != nil && c.stop.OnSignalError != nil {
		c.stop.OnSignalError(err)
	}
	select {
	case <-c.exited:
	case <-time.After(c.stop.Grace):
		if c.stop.OnGraceExpired != nil {
			c.stop.OnGraceExpired()
		}
		_ = p.Kill()
		<-c.exited
	}
	return true
}

// deliver sends sig to p: there are no process groups here.
func deliver(p *os.Process, _ []int, sig os.Signal, _ bool) { _ = p.Signal(sig) }
