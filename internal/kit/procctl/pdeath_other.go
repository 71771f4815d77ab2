//go:build !linux

package procctl

import "os/exec"

// onParentDeath: only Linux has a parent-death signal; elsewhere a child
// outlives a driver that is killed without a chance to stop it.
func onParentDeath(*exec.Cmd, Stop) {}

func startLocked(start func() error, wait func()) error {
	if err := start(); err != nil {
		return err
	}
	go wait()
	return nil
}
