//go:build !unix

package ansible

// runSupported: ansible-runner, like Ansible's control node, runs on POSIX
// systems only. Stream works everywhere.
const runSupported = false

// cleanStale does nothing where Run does not run.
func cleanStale(string) {}
