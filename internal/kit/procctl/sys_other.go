//go:build !linux

package procctl

import "os/exec"

// onParentDeath: only Linux has a parent-death signal; elsewhere a child
// outlives a driver that is killed without a chance to stop it.
func onParentDeath(*exec.Cmd, Stop) {}

// DescendantGroups is not available without /proc: it returns nil, and a
// stop relies on the groups its caller knows.
func DescendantGroups(int) []int { return nil }
