package procctl

import (
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/progressotel/progressotel/adapter"
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
	// terminal's Ctrl-C does; otherwise to the child alone.
	Group bool
	// Grace is how long the child may take to exit after Signal before
	// SIGKILL goes to its group and to the groups of Others.
	Grace time.Duration
	// Others returns the run's process groups outside the child's (a
	// helper in a session of its own), given the child's pid (see
	// DescendantGroups); asked before Signal and when the grace ends.
	Others func(pid int) []int
	// OnSignalError, when set, is told that Signal could not be sent.
	OnSignalError func(error)
	// OnGraceExpired, when set, is told that the grace period ended before
	// the child exited, just before the SIGKILL.
	OnGraceExpired func()
	// Target returns the process groups of the user's command when the
	// child wraps it (ansible-playbook under ansible-runner), given the
	// child's pid: Deliver sends there; nil or none yet: to the child.
	Target func(pid int) []int
	// InheritGroup keeps the child in the caller's process group: a
	// command in a terminal's foreground, which reads the terminal and gets
	// its Ctrl-C directly. A stop and Deliver then signal the child alone;
	// what it started is not reached.
	InheritGroup bool
}

// Child is a process started in a process group of its own, its stdout on
// a pipe (unless the command's Stdout was set). Read Stdout to its end,
// then call Wait; Stop and Deliver may be called at any time, from any
// goroutine.
type Child struct {
	Cmd *exec.Cmd // the command; its Stdout is the pipe's write end
	// Stdout is the read end of the child's stdout (nil when the command's
	// Stdout was set before New). Once the child has exited, a blocked read
	// fails with os.ErrDeadlineExceeded after DrainTimeout.
	Stdout *os.File

	stop      Stop
	pw        *os.File // the write end of the stdout pipe, closed once started
	delivered atomic.Int32
	exited    chan struct{}
	waitErr   error
	stopOnce  sync.Once
	stopped   chan struct{}
	signalled bool // written before stopped is closed
}

// New prepares cmd to run in a process group of its own (unless
// stop.InheritGroup), its stdout on a pipe unless cmd.Stdout is set, and
// cmd.WaitDelay DrainTimeout unless set. The error is the pipe's; Close
// releases it.
func New(cmd *exec.Cmd, stop Stop) (*Child, error) {
	c := &Child{Cmd: cmd, stop: stop, exited: make(chan struct{}), stopped: make(chan struct{})}
	if cmd.Stdout == nil {
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		cmd.Stdout, c.Stdout, c.pw = pw, pr, pw
	}
	if stop.InheritGroup {
		c.stop.Group, c.stop.Target = false, nil
	} else {
		ownGroup(cmd)
	}
	onParentDeath(cmd, stop)
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = DrainTimeout
	}
	return c, nil
}

// Start starts the child. The error is exec's.
func (c *Child) Start() error {
	err := startLocked(c.Cmd.Start, func() {
		c.waitErr = c.Cmd.Wait()
		close(c.exited)
		if c.Stdout != nil {
			_ = c.Stdout.SetReadDeadline(time.Now().Add(DrainTimeout))
		}
	})
	if c.pw != nil {
		c.pw.Close() // the child has its own copy; the parent's would keep the pipe open
	}
	return err
}

// startLocked runs start and then wait on one goroutine locked to its OS
// thread while the child runs. Linux's parent-death signal follows the
// thread that started the child, not the process: were that thread to end
// (the runtime ends a thread whose goroutine exits locked to it), the child
// would get the signal while the driver lives. The goroutine exits locked
// once the child has been reaped, so the thread ends with nothing left to
// signal. (Elsewhere it costs nothing: Wait holds a thread anyway.)
func startLocked(start func() error, wait func()) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		err := start()
		started <- err
		if err != nil {
			runtime.UnlockOSThread()
			return
		}
		wait()
	}()
	return <-started
}

// TerminalSignal is a signal a terminal sent to its whole foreground job
// (Ctrl-C's SIGINT, Ctrl-\'s SIGQUIT), not with kill(2) to one process:
// Deliver sends it to the whole process group.
type TerminalSignal struct{ Sig syscall.Signal }

// Signal makes TerminalSignal an os.Signal.
func (t TerminalSignal) Signal() {}

func (t TerminalSignal) String() string { return t.Sig.String() + " from the terminal" }

// Deliver sends sig to the user's command as if sent to it directly: to
// the groups of Stop.Target, else to the child. A TerminalSignal goes to
// each whole group (unless the child shares the caller's group), any other
// to the group's leader alone, as kill(1) sends it. It does nothing once
// the child has exited.
func (c *Child) Deliver(sig os.Signal) {
	select {
	case <-c.exited:
		return
	default:
	}
	whole := false
	if ts, ok := sig.(TerminalSignal); ok {
		sig, whole = ts.Sig, !c.stop.InheritGroup
	}
	if ss, ok := sig.(syscall.Signal); ok {
		c.delivered.Store(int32(ss))
	}
	var targets []int
	if c.stop.Target != nil {
		targets = c.stop.Target(c.Cmd.Process.Pid)
	}
	deliver(c.Cmd.Process, targets, sig, whole)
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

// Wait waits for the child to exit and for a stop under way to finish.
// signalled reports whether Stop signalled the child before it exited; err
// is exec.Cmd.Wait's (the exit status is in Cmd.ProcessState).
func (c *Child) Wait() (signalled bool, err error) {
	<-c.exited
	c.stopOnce.Do(func() { close(c.stopped) }) // no stop from now on
	<-c.stopped
	return c.signalled, c.waitErr
}

// Delivered returns the last signal Deliver sent, 0 when none.
func (c *Child) Delivered() syscall.Signal { return syscall.Signal(c.delivered.Load()) }

// Close closes the read end of stdout.
func (c *Child) Close() error {
	if c.Stdout != nil {
		return c.Stdout.Close()
	}
	return nil
}

// Command is what a launcher runs: the public adapter.Command.
type Command = adapter.Command

// Ended calls c.Exited when it is set.
func Ended(c *Command) {
	if c.Exited != nil {
		c.Exited()
	}
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

// ExitCode is the shell's view of how a process ended: its exit status, or
// 128+n when signal n killed it.
func ExitCode(ps *os.ProcessState) int { return ExitOf(ps).ExitCode() }

// Exit is how a process ended: the public adapter.Exit.
type Exit = adapter.Exit

// ExitOf reads how a process ended; a nil ps (not started) is Code -1.
func ExitOf(ps *os.ProcessState) Exit {
	if ps == nil {
		return Exit{Code: -1}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return Exit{Signal: ws.Signal()}
	}
	return Exit{Code: ps.ExitCode()}
}
