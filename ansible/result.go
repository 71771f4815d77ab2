package ansible

import (
	"slices"
	"time"
)

// Result is the outcome of a run, as Ansible reported it.
type Result struct {
	// ExitCode is the exit status of ansible-runner, which is
	// ansible-playbook's (0 ok, 2 failed hosts, 4 unreachable hosts or a
	// playbook Ansible could not load, ...), 128+n when killed by signal n;
	// -1 for Stream, which has no process.
	ExitCode int
	// Stats holds the recap counts per host.
	Stats map[string]HostStats
	// StatsRebuilt reports that the final stats event never arrived: Stats
	// and the PlaybookResult event were rebuilt from the events seen.
	StatsRebuilt bool
	// FailedHosts lists, sorted, the hosts on which a task failed (not
	// ignored with ignore_errors).
	FailedHosts []string
	// UnreachableHosts lists, sorted, the hosts that were unreachable.
	UnreachableHosts []string
	// Plays lists the plays that started, in order.
	Plays []Play
	// Start and End are Ansible's times of the first and last events.
	Start, End time.Time
	// Events counts the job events decoded.
	Events int
	// SkippedLines counts lines that were not job events: not JSON
	// (start-up errors, warnings), malformed, or too long.
	SkippedLines int
	// Warnings holds Ansible's warnings and deprecation notices, at most
	// 100, without terminal escapes.
	Warnings []string
	// ArtifactDir is the run's private directory when WithKeepArtifacts was
	// given: ansible-runner's artifacts are under its artifacts/ folder.
	ArtifactDir string
}

// OK reports a run that ended with status 0 (or, for Stream, without a
// status) in which no host failed and no host was unreachable.
func (r Result) OK() bool {
	return (r.ExitCode == 0 || r.ExitCode == -1) && len(r.FailedHosts) == 0 && len(r.UnreachableHosts) == 0
}

// HostStats are the recap counts of one host, under the names of the
// Ignition Ansible driver's hostStats (Ansible's "dark" is unreachable).
type HostStats struct {
	OK          int `json:"ok"`
	Changed     int `json:"changed"`
	Failures    int `json:"failures"`
	Skipped     int `json:"skipped"`
	Unreachable int `json:"unreachable"`
	Rescued     int `json:"rescued"`
	Ignored     int `json:"ignored"`
}

// Play is a play that started: its name and Ansible's id for it.
type Play struct {
	Name string `json:"name"`
	ID   string `json:"id"`
}

// hostsWhere returns the sorted hosts whose stats satisfy f.
func hostsWhere(stats map[string]HostStats, f func(HostStats) bool) []string {
	var hosts []string
	for h, s := range stats {
		if f(s) {
			hosts = append(hosts, h)
		}
	}
	slices.Sort(hosts)
	return hosts
}
