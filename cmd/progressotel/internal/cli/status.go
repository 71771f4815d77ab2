package cli

import (
	"fmt"
	"os"

	"github.com/progressotel/progressotel/internal/kit/procctl"
)

// Status is how progressotel ends: with an exit code (Code), or, when the
// child of `run` was killed by a signal, with that signal (Signal).
type Status procctl.Exit

// Exit statuses of progressotel's own.
const (
	// ExitUsage: invalid flags or input; nothing was run or emitted.
	ExitUsage = 2
	// ExitCannotRun: the command was found but could not be started (as
	// in POSIX shells).
	ExitCannotRun = 126
	// ExitNotFound: the command was not found (as in POSIX shells).
	ExitNotFound = 127
)

// ExitCode is the status a POSIX shell reports for s: the exit code, or
// 128+N for signal N.
func (s Status) ExitCode() int { return procctl.Exit(s).ExitCode() }

// OK reports an exit with code 0.
func (s Status) OK() bool { return s.Signal == 0 && s.Code == 0 }

// String says how the child ended, for events and messages: "exited with
// status 2", "killed by signal SIGTERM".
func (s Status) String() string {
	if s.Signal != 0 {
		return fmt.Sprintf("killed by signal %s", signalName(s.Signal))
	}
	return fmt.Sprintf("exited with status %d", s.Code)
}

// Exit ends the process with s: it re-raises s.Signal where it can (see
// reraise), so that the parent sees the same death as if it had run the
// child itself, and otherwise exits with ExitCode.
func (s Status) Exit() {
	if s.Signal != 0 {
		reraise(s.Signal)
	}
	os.Exit(s.ExitCode())
}
