package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// selfCPU is this process's user+system CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU is the user+system CPU time of process pid so far, from
// /proc/<pid>/stat; 0 when it cannot be read.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)) // none for pid 0
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0
	}
	return ticks(fields, 11, 12)
}

// ticks sums the clock ticks (USER_HZ: 100 on Linux) at the indexes is of f.
func ticks(f []string, is ...int) time.Duration {
	var n int64
	for _, i := range is {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		n += v
	}
	return time.Duration(n) * time.Second / 100
}

// rss is the resident set size of process pid (0: this process) in bytes,
// from /proc/<pid>/status; 0 when it cannot be read.
func rss(pid int) int64 {
	path := "/proc/self/status"
	if pid != 0 {
		path = fmt.Sprintf("/proc/%d/status", pid)
	}
	b, _ := os.ReadFile(path)
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) == 0 {
				return 0
			}
			kb, _ := strconv.ParseInt(f[0], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// machineCPU is the CPU time all processes of the machine have used so
// far (user, nice, system, irq, softirq, steal from /proc/stat), to tell
// how loaded the machine was during a step.
func machineCPU() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	return ticks(f, 1, 2, 3, 6, 7, 8)
}
