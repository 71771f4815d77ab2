//go:build unix && !linux

package ansible

// descendantGroups is not available without /proc: Run relies on the pid
// that the events report.
func descendantGroups(int) []int { return nil }
