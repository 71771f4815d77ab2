package procctl

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
)

// onParentDeath asks the kernel to send the child stop.Signal (SIGKILL
// when there is none) if the driver dies first, SIGKILL included, so that
// a run does not go on unsupervised: the tool gets its usual request to
// stop (ansible-runner then stops the playbook).
func onParentDeath(cmd *exec.Cmd, stop Stop) {
	sig, ok := stop.Signal.(syscall.Signal)
	if !ok || stop.Signal == os.Kill {
		sig = syscall.SIGKILL
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = sig
}

// DescendantGroups returns the process groups of every descendant of pid,
// read from /proc: how a stop finds a helper that made a session of its
// own (ansible-playbook under ansible-runner) before the events tell its
// pid. It returns nil where there is no /proc.
func DescendantGroups(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	type proc struct{ pid, pgrp int }
	children := map[int][]proc{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces and ')'.
		var state string
		var ppid, pgrp int
		if i := bytes.LastIndexByte(b, ')'); i >= 0 {
			if _, err := fmt.Sscan(string(b[i+1:]), &state, &ppid, &pgrp); err == nil {
				children[ppid] = append(children[ppid], proc{p, pgrp})
			}
		}
	}
	var groups []int
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		for _, c := range children[queue[0]] {
			if !slices.Contains(groups, c.pgrp) {
				groups = append(groups, c.pgrp)
			}
			queue = append(queue, c.pid)
		}
	}
	return groups
}
