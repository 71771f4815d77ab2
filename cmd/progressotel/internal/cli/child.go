package cli

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"sync"

	"github.com/progressotel/progressotel/internal/kit/procctl"
)

// supervisor forwards signals to the child of a run and tells how it
// ended. One supervisor serves a whole run, which may start more than one
// process in turn (an adapter's init then apply): signals go to the one
// running.
//
// It takes the signals from the start of the run, so that a SIGTERM that
// arrives while telemetry is being set up is neither lost nor fatal to
// progressotel: it is delivered to the child as soon as it has started.
// Signals that arrive after the child has exited cut the telemetry shutdown
// short (afterExit) instead: progressotel then exits with the child's
// status at once.
type supervisor struct {
	sigs      chan os.Signal
	done      chan struct{}
	fromTerm  func() bool // fromTerminal, replaced in tests
	afterExit func()

	mu      sync.Mutex
	proc    *os.Process
	pending []os.Signal // received before the child started
	exited  bool
	late    bool // a signal arrived after the exit, before afterExit was set
	stopped bool
}

// newSupervisor starts taking the forwarded signals, except those that
// progressotel was started with ignored (under nohup, or a shell script's
// background job for SIGINT and SIGQUIT): taking one would stop ignoring
// it, and the child would no longer inherit it ignored.
func newSupervisor() *supervisor {
	s := &supervisor{
		sigs:     make(chan os.Signal, 32),
		done:     make(chan struct{}),
		fromTerm: fromTerminal,
	}
	var take []os.Signal
	for _, sig := range append(slices.Clone(forwardAlways), forwardWithoutTerminal...) {
		if !signal.Ignored(sig) {
			take = append(take, sig)
		}
	}
	if len(take) > 0 {
		signal.Notify(s.sigs, take...)
	}
	go s.loop()
	return s
}

func (s *supervisor) loop() {
	defer close(s.done)
	for sig := range s.sigs {
		if slices.Contains(forwardWithoutTerminal, sig) && s.fromTerm() {
			// The terminal sent it to the child too. A second one
			// would be taken as "really stop now" (OpenTofu exits
			// without cleaning up on a second interrupt).
			continue
		}
		s.mu.Lock()
		switch {
		case s.exited:
			s.late = true
			if s.afterExit != nil {
				s.afterExit()
			}
		case s.proc == nil:
			s.pending = append(s.pending, sig)
		default:
			_ = s.proc.Signal(sig)
		}
		s.mu.Unlock()
	}
}

// start starts cmd as the run's current child and delivers the signals
// that arrived before it.
func (s *supervisor) start(cmd *exec.Cmd) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	s.proc, s.exited = cmd.Process, false
	for _, sig := range s.pending {
		_ = s.proc.Signal(sig)
	}
	s.pending = nil
	return nil
}

// wait waits for cmd, started by start, and returns how it ended.
func (s *supervisor) wait(cmd *exec.Cmd) Status {
	_ = cmd.Wait() // the status is in ProcessState; I/O errors are the adapter's
	s.mu.Lock()
	s.exited = true
	s.mu.Unlock()
	if cmd.ProcessState == nil {
		return Status{Code: ExitCannotRun} // not reaped: cannot happen for a started process
	}
	return statusOf(cmd.ProcessState)
}

// onSignalAfterExit sets what a forwarded signal does once the last child
// has exited; f runs at once if one has arrived since.
func (s *supervisor) onSignalAfterExit(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.afterExit = f
	if s.late {
		f()
	}
}

// stop stops taking signals. The process's own default handling is back
// for them once it returns.
func (s *supervisor) stop() {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.stopped = true
	s.mu.Unlock()
	signal.Stop(s.sigs)
	close(s.sigs)
	<-s.done
}

// statusOf reads how a process ended.
func statusOf(ps *os.ProcessState) Status {
	if sig := procctl.KilledBy(ps); sig != 0 {
		return Status{Signal: sig}
	}
	return Status{Code: ps.ExitCode()}
}

// startFailure is the status, as a POSIX shell gives it, of a command that
// could not be started: 127 when it was not found, else 126.
func startFailure(err error) Status {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return Status{Code: ExitNotFound}
	}
	return Status{Code: ExitCannotRun}
}
