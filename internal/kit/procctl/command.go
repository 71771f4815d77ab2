package procctl

import (
	"io"
	"os"
)

// Command is a command line that a wrapper (the progressotel command) runs
// as its user gave it, through an adapter's own launcher (packages ansible,
// terraform). The adapter adds only what its stream needs (-json, an
// ansible-runner private directory); the run ends with the status the
// command itself would have had.
type Command struct {
	Argv   []string  // the command line; Argv[0] is the tool, a name or a path
	Env    []string  // the environment; nil: the current process's
	Stdin  io.Reader // nil: none (/dev/null)
	Stderr io.Writer // the tool's stderr as it is; nil: kept for errors only
	// Signals are delivered to the command as if sent to it directly (see
	// Child.Deliver): what the wrapper receives. nil: none.
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
