//go:build unix

package ansible

// runSupported: ansible-runner runs on POSIX systems only.
const runSupported = true
