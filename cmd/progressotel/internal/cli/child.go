package cli

import (
	"errors"
	"fmt"
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
// them on Signals, to the adapter's launcher (procctl.Command.Signals),
// from the start of the run: a SIGTERM during the set-up is neither lost
// nor fatal. Signals after the command has ended cut the telemetry
// shutdown short (afterExit) instead.
type supervisor struct {
	sigs chan os.Signal
	out  chan os.Signal // Signals
	done chan struct{}
	// sharesGroup: the command runs in progressotel's process group (a
	// plain command), so a terminal's SIGINT and SIGQUIT reached it too.
	sharesGroup atomic.Bool

	// stopped is the first signal by which the user stopped the run
	// (SIGINT, SIGTERM, SIGHUP), forwarded or not: a run it ends is
	// cancelled, not failed.
	stopped atomic.Int32

	mu        sync.Mutex
	afterExit func()
	exited    bool
	late      bool // a signal arrived after the exit, before afterExit was set
}

// newSupervisor starts taking the forwarded signals but those progressotel
// was started with ignored (nohup, a script's background job): taking one
// would stop ignoring it, and the child would no longer inherit it ignored.
func newSupervisor() *supervisor {
	s := &supervisor{sigs: make(chan os.Signal, 32), out: make(chan os.Signal, 32), done: make(chan struct{})}
	take := slices.DeleteFunc(slices.Concat(forwardAlways, forwardWithoutTerminal), signal.Ignored)
	if len(take) > 0 {
		signal.Notify(s.sigs, take...)
	}
	go s.loop()
	return s
}

func (s *supervisor) loop() {
	defer close(s.done)
	for sig := range s.sigs {
		if ss, ok := sig.(syscall.Signal); ok && (ss == syscall.SIGINT || ss == syscall.SIGTERM || ss == syscall.SIGHUP) {
			s.mu.Lock()
			if !s.exited {
				s.stopped.CompareAndSwap(0, int32(ss))
			}
			s.mu.Unlock()
		}
		if slices.Contains(forwardWithoutTerminal, sig) && fromTerminal() {
			if s.sharesGroup.Load() {
				// The terminal sent it to the command too: a second one
				// would be taken as "really stop now".
				continue
			}
			// The command's own process group, which the terminal did not
			// reach, gets it as from the terminal.
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

func (s *supervisor) Signals() <-chan os.Signal { return s.out }

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

// stop stops taking signals, once; their default handling is back once it
// returns.
func (s *supervisor) stop() {
	signal.Stop(s.sigs)
	close(s.sigs)
	<-s.done
}

// startFailure is the status, as a POSIX shell gives it, of a command that
// could not be started: 127 when it was not found, else 126.
func startFailure(err error) Status {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return Status{Code: ExitNotFound}
	}
	return Status{Code: ExitCannotRun}
}

// Status is how progressotel ends: with an exit code, or with the signal
// that killed the child of `run`.
type Status procctl.Exit

// Exit statuses of progressotel's own (the last two as in POSIX shells).
const (
	ExitUsage     = 2   // invalid flags or input; nothing was run or emitted
	ExitCannotRun = 126 // the command was found but could not be started
	ExitNotFound  = 127 // the command was not found
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

// Exit ends the process with s: it re-raises s.Signal where it can, so
// that the parent sees the same death as without progressotel, else exits
// with ExitCode.
func (s Status) Exit() {
	if s.Signal != 0 {
		reraise(s.Signal)
	}
	os.Exit(s.ExitCode())
}
