//go:build !unix

package ansible

import (
	"errors"
	"os"
)

// runSupported: ansible-runner, like Ansible's control node, runs on POSIX
// systems only. Stream works everywhere.
const runSupported = false

// cleanStale does nothing where Run does not run.
func cleanStale(string) {}

func openStderrPipe(string) (*os.File, error) {
	return nil, errors.New("no named pipes on this system")
}
