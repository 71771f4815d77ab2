package procctl

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
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
	type proc struct{ ppid, pgrp int }
	procs := map[int]proc{}
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
		s := string(b)
		var state string
		var pr proc
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			if _, err := fmt.Sscan(s[i+1:], &state, &pr.ppid, &pr.pgrp); err == nil {
				procs[p] = pr
			}
		}
	}
	children := map[int][]int{}
	for p, pr := range procs {
		children[pr.ppid] = append(children[pr.ppid], p)
	}
	var groups []int
	seen := map[int]bool{}
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if g := procs[c].pgrp; !seen[g] {
				seen[g] = true
				groups = append(groups, g)
			}
			queue = append(queue, c)
		}
	}
	return groups
}
