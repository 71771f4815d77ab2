package adapter

import (
	"io"
	"os"
	"syscall"
)

// Command is a command line that an adapter's RunCommandLine runs as its
// user typed it (ansible.RunCommandLine, terraform.RunCommandLine), with
// what the wrapper connects to it. Only Argv is required.
type Command struct {
	// Argv is the command line; Argv[0] is the tool, a name on PATH or a
	// path.
	Argv []string
	// Env is the tool's environment, "KEY=value" entries; nil: the current
	// process's.
	Env []string
	// Stdin is the tool's standard input; nil: none (/dev/null).
	Stdin io.Reader
	// Stderr receives the tool's stderr as it wrote it; nil: the adapter
	// keeps its tail for errors only.
	Stderr io.Writer
	// Signals are delivered to the tool as if sent to it directly: what the
	// wrapper receives (SIGINT from a terminal, SIGTERM from a supervisor).
	// nil: none.
	Signals <-chan os.Signal
	// Started, when set, is called with the pid of the process started
	// (ansible-runner for an ansible-playbook command line).
	Started func(pid int)
	// Exited, when set, is called once the tool has exited and its output
	// is read, before the run's final event is recorded: a wrapper stops
	// taking its nested emits there, so that none lands after the run's
	// end.
	Exited func()
}

// Exit is how a tool ended, as a shell sees it: its exit code, or the
// signal that killed it.
type Exit struct {
	Code   int            // the exit status when Signal is 0; -1: the process did not start
	Signal syscall.Signal // the signal that killed the process, 0 when it exited
}

// ExitCode is the shell's view of e: the code, or 128+n for signal n. A
// wrapper exits with it.
func (e Exit) ExitCode() int {
	if e.Signal != 0 {
		return 128 + int(e.Signal)
	}
	return e.Code
}
