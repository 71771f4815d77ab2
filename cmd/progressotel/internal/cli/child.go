package cli

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/progressotel/progressotel/internal/kit/procctl"
)

// supervisor takes the signals a run forwards to its command and passes
// them on Signals, which the adapter's launcher delivers to the command as
// if they had been sent to it directly (procctl.Command.Signals).
//
// It takes them from the start of the run, so that a SIGTERM that arrives
// while telemetry is being set up is neither lost nor fatal to
// progressotel: it waits on Signals until the command has started.
// Signals that arrive after the command has ended cut the telemetry
// shutdown short (afterExit) instead: progressotel then exits with the
// command's status at once.
type supervisor struct {
	sigs     chan os.Signal
	out      chan os.Signal // Signals
	done     chan struct{}
	fromTerm func() bool // fromTerminal, replaced in tests
	// sharesGroup: the command runs in progressotel's process group (a
	// plain command), so a terminal's SIGINT and SIGQUIT reached it too.
	sharesGroup atomic.Bool

	mu        sync.Mutex
	afterExit func()
	exited    bool
	late      bool // a signal arrived after the exit, before afterExit was set
	stopped   bool
}

// newSupervisor starts taking the forwarded signals, except those that
// progressotel was started with ignored (under nohup, or a shell script's
// background job for SIGINT and SIGQUIT): taking one would stop ignoring
// it, and the child would no longer inherit it ignored.
func newSupervisor() *supervisor {
	s := &supervisor{
		sigs:     make(chan os.Signal, 32),
		out:      make(chan os.Signal, 32),
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
			if s.sharesGroup.Load() {
				// The terminal sent it to the command too. A second
				// one would be taken as "really stop now".
				continue
			}
			// The command runs in a process group of its own, which
			// the terminal did not reach: it gets the signal as from
			// the terminal, its whole group.
			if ss, ok := sig.(syscall.Signal); ok {
				sig = procctl.TerminalSignal{Sig: ss}
			}
		}
		s.mu.Lock()
		if s.exited {
			s.late = true
			if s.afterExit != nil {
				s.afterExit()
			}
			s.mu.Unlock()
			continue
		}
		s.mu.Unlock()
		select {
		case s.out <- sig:
		default: // 32 signals waiting: the command has them already
		}
	}
}

// Signals are the signals for the command.
func (s *supervisor) Signals() <-chan os.Signal { return s.out }

// ended says that the command has ended.
func (s *supervisor) ended() {
	s.mu.Lock()
	s.exited = true
	s.mu.Unlock()
}

// onSignalAfterExit sets what a forwarded signal does once the command has
// ended; f runs at once if one has arrived since.
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

// statusOf is the Status of how a command ended.
func statusOf(e procctl.Exit) Status { return Status{Code: e.Code, Signal: e.Signal} }

// startFailure is the status, as a POSIX shell gives it, of a command that
// could not be started: 127 when it was not found, else 126.
func startFailure(err error) Status {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return Status{Code: ExitNotFound}
	}
	return Status{Code: ExitCannotRun}
}
