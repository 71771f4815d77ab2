package procctl

import (
	"os"
	"os/exec"
	"sync"
	"time"
)

// DrainTimeout bounds the wait for the end of a child's output once it has
// exited: a process it left behind could hold the pipes open.
const DrainTimeout = 5 * time.Second

// Stop says how a Child is stopped. The zero value sends os.Kill at once.
type Stop struct {
	// Signal is the request to stop gracefully: SIGTERM, or SIGINT for a
	// tool that treats it as Ctrl-C.
	Signal os.Signal
	// Group sends Signal to the child's whole process group, as a
	// terminal's Ctrl-C does; otherwise to the child alone (which stops
	// its own helpers).
	Group bool
	// Grace is how long the child may take to exit after Signal before
	// SIGKILL goes to its group and to the groups of Others.
	Grace time.Duration
	// Others returns the process groups of the run outside the child's
	// own (a helper that made a session of its own), given the child's
	// pid; see DescendantGroups. It is asked before Signal and again when
	// the grace period ends. nil: none.
	Others func(pid int) []int
	// OnSignalError, when set, is told that Signal could not be sent.
	OnSignalError func(error)
	// OnGraceExpired, when set, is told that the grace period ended before
	// the child exited, just before the SIGKILL.
	OnGraceExpired func()
}

// Child is a process started in a process group of its own, its stdout on
// a pipe. Read Stdout to its end, then call Wait; Stop may be called at
// any time, from any goroutine.
type Child struct {
	// Cmd is the command; its Stdout is the pipe's write end.
	Cmd *exec.Cmd
	// Stdout is the read end of the child's stdout. Once the child has
	// exited, a read blocked on it fails with os.ErrDeadlineExceeded
	// after DrainTimeout (a leftover process may hold the pipe open).
	Stdout *os.File

	stop      Stop
	exited    chan struct{}
	waitErr   error
	stopOnce  sync.Once
	stopped   chan struct{}
	signalled bool // written before stopped is closed
}

// New prepares cmd to run in a process group of its own with its stdout on
// a pipe; cmd.WaitDelay is DrainTimeout unless set. The error is the
// pipe's. Close releases the pipe.
func New(cmd *exec.Cmd, stop Stop) (*Child, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	ownGroup(cmd)
	onParentDeath(cmd, stop)
	cmd.Stdout = pw
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = DrainTimeout
	}
	return &Child{Cmd: cmd, Stdout: pr, stop: stop, exited: make(chan struct{}), stopped: make(chan struct{})}, nil
}

// Start starts the child. The error is exec's.
func (c *Child) Start() error {
	pw := c.Cmd.Stdout.(*os.File)
	err := startLocked(c.Cmd.Start, func() {
		c.waitErr = c.Cmd.Wait()
		close(c.exited)
		_ = c.Stdout.SetReadDeadline(time.Now().Add(DrainTimeout))
	})
	pw.Close() // the child has its own copy; the parent's would keep the pipe open
	return err
}

// Stop starts stopping the child as its Stop says, once, and returns at
// once. It does nothing once the child has exited.
func (c *Child) Stop() {
	c.stopOnce.Do(func() {
		go func() {
			c.signalled = c.stopRun()
			close(c.stopped)
		}()
	})
}

// Wait waits for the child to exit and for a stop under way to finish its
// clean-up. signalled reports whether Stop signalled the child before it
// exited; err is exec.Cmd.Wait's (the exit status is in Cmd.ProcessState).
func (c *Child) Wait() (signalled bool, err error) {
	<-c.exited
	c.stopOnce.Do(func() { close(c.stopped) }) // no stop from now on
	<-c.stopped
	return c.signalled, c.waitErr
}

// Close closes the read end of stdout.
func (c *Child) Close() error { return c.Stdout.Close() }
