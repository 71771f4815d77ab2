package testutil

import (
	"os"
	"strconv"
	"strings"
)

// ProcessesWith returns the running processes, other than this one, whose
// command line holds s, as "pid: command line", read from /proc: how a
// test finds what a run left behind. Zombies have no command line and are
// not listed. Without /proc it returns nil.
func ProcessesWith(s string) []string {
	entries, _ := os.ReadDir("/proc")
	var found []string
	self := strconv.Itoa(os.Getpid())
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil || e.Name() == self {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(b) == 0 {
			continue // gone meanwhile, or a zombie
		}
		cmd := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cmd, s) {
			found = append(found, e.Name()+": "+cmd)
		}
	}
	return found
}
