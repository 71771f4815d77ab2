package procctl

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

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
