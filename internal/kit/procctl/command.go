package procctl

import (
	"io"
	"os"
)

// Command is a command line that a wrapper (the progressotel command) runs
// as its user gave it, through an adapter's own launcher: ansible-playbook
// or ansible-runner (package ansible), tofu or terraform (package
// terraform). The adapter adds only what its stream needs (-json, an
// ansible-runner private directory), and the run ends with the status the
// command itself would have had.
type Command struct {
	// Argv is the command line; Argv[0] is the tool, a name or a path.
	Argv []string
	// Env is the command's environment; nil: the current process's.
	Env []string
	// Stdin is the command's standard input; nil: none (/dev/null).
	Stdin io.Reader
	// Stderr receives the tool's stderr as it is; nil: kept for errors
	// only.
	Stderr io.Writer
	// Signals are delivered to the command as if they had been sent to
	// it directly, a terminal's SIGINT included (see Child.Deliver): the
	// wrapper forwards what it receives. nil: none.
	Signals <-chan os.Signal
	// Started, when set, is called with the pid of the process started
	// (ansible-runner for an ansible-playbook command line).
	Started func(pid int)
}

// Forward delivers each signal of sigs to c (see Child.Deliver), from a
// goroutine, until stop is called; stop waits for that goroutine.
func Forward(c *Child, sigs <-chan os.Signal) (stop func()) {
	if sigs == nil {
		return func() {}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case s := <-sigs:
				c.Deliver(s)
			}
		}
	}()
	return func() { close(done); <-finished }
}
