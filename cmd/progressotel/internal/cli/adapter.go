package cli

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/base/term"
	"github.com/progressotel/progressotel/internal/kit/adapter"
	"github.com/progressotel/progressotel/internal/kit/procctl"
	"github.com/progressotel/progressotel/progress"
)

// Adapter turns the run of a tool it knows into progress events and
// spans. `run` gives the command line to the first registered adapter
// whose Match accepts it (or to the one --adapter names), else to the
// generic command adapter.
//
// An adapter owns what the tool's output means, and runs the tool through
// its package's own launcher (ansible.RunCommandLine,
// terraform.RunCommandLine; procctl for a plain command), which delivers
// Invocation.Signals to the command; it returns the status of the command
// as it ended, never remapped.
type Adapter interface {
	// Name names the adapter, for --adapter and messages.
	Name() string
	// Match reports whether the adapter handles argv, the command line
	// after "--"; argv[0] is the command as given, a name or a path.
	Match(argv []string) bool
	// Run runs argv and reports it inside the span of ctx, framed by
	// common/OperationStarted and common/OperationCompleted or
	// common/OperationFailed.
	Run(ctx context.Context, inv *Invocation) Status
}

// Invocation is what an adapter runs, and with what.
type Invocation struct {
	// Argv is the command line after "--".
	Argv []string
	// Env is the child's environment for the span of ctx: progressotel's
	// own, with that trace context (TRACEPARENT, X_TRACECTX_*, ...) and the
	// run's socket.
	Env func(ctx context.Context) []string
	// Operation names the operation of the common events (--operation);
	// empty when not given: each adapter has its default.
	Operation string
	// FailureCode is the failureCode of OperationFailed (--failure-code).
	FailureCode string
	// Envelope is every event's envelope.
	Envelope progress.Envelope
	// Recorder records the events: the run's, which numbers them with
	// the emits of the child in one sequence.
	Recorder *progress.Recorder
	// TracerProvider makes the adapter's spans.
	TracerProvider trace.TracerProvider
	// Stdin, Stdout and Stderr are progressotel's own.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Logger receives the adapter's warnings; they go to stderr.
	Logger *slog.Logger
	// Lines makes the generic adapter record output lines (--lines).
	Lines LinesOptions
	// Started, when set, is told the pid of the process started.
	Started func(pid int)

	sup *supervisor
}

// command is the procctl.Command of the invocation, its environment in
// the span of ctx; sharesGroup says whether the command runs in
// progressotel's process group (see supervisor).
func (inv *Invocation) command(ctx context.Context, sharesGroup bool) procctl.Command {
	inv.sup.sharesGroup.Store(sharesGroup)
	stdin := inv.Stdin
	if f, ok := stdin.(*os.File); ok && !sharesGroup && term.IsTerminal(f) {
		// A process group that is not the terminal's foreground one
		// would be stopped (SIGTTIN) by a read of the terminal: it
		// reads nothing instead.
		stdin = nil
	}
	return procctl.Command{Argv: inv.Argv, Env: inv.Env(ctx), Stdin: stdin, Stderr: inv.Stderr,
		Signals: inv.sup.Signals(), Started: inv.Started}
}

// adapters are the registered adapters, tried in order.
var adapters = []Adapter{ansibleAdapter{}, terraformAdapter{}}

// chooseAdapter returns the adapter for argv: the one named by name, or
// with "auto" the first that matches, else the generic one ("none" forces
// the generic one).
func chooseAdapter(name string, argv []string) (Adapter, error) {
	switch name {
	case "none", commandAdapterName:
		return commandAdapter{}, nil
	case "", "auto":
		for _, a := range adapters {
			if a.Match(argv) {
				return a, nil
			}
		}
		return commandAdapter{}, nil
	}
	for _, a := range adapters {
		if a.Name() == name {
			return a, nil
		}
	}
	return nil, invalidf("--adapter %q: unknown (known: auto, none%s)", name, adapterNames())
}

// adapterList lists the registered adapters for --help.
func adapterList() string {
	if len(adapters) == 0 {
		return " (none in this build)"
	}
	return ": " + strings.TrimPrefix(adapterNames(), ", ")
}

func adapterNames() string {
	s := ""
	for _, a := range adapters {
		s += ", " + a.Name()
	}
	return s
}

// commandAdapterName is the generic adapter's name.
const commandAdapterName = "command"

// commandAdapter runs any command: the operation events around it and,
// with --lines, one event per line of its output.
type commandAdapter struct{}

func (commandAdapter) Name() string        { return commandAdapterName }
func (commandAdapter) Match([]string) bool { return true }

func (commandAdapter) Run(ctx context.Context, inv *Invocation) Status {
	name := filepath.Base(inv.Argv[0])
	operation := inv.Operation
	if operation == "" {
		operation = name
	}
	cfg := &adapter.Config{}
	adapter.Configure(cfg, cfg, adapter.Defaults{Name: "progressotel", Scope: ScopeName, GracePeriod: 10 * time.Second, MaxLineBytes: maxLine},
		[]func(*adapter.Config){func(c *adapter.Config) {
			c.SetRecorder(inv.Recorder)
			c.SetTracerProvider(inv.TracerProvider)
			c.SetEnvelope(inv.Envelope)
			c.SetLogger(inv.Logger)
		}})
	started := time.Now()
	op := cfg.StartOperation(ctx, operation, operation, started)
	fail := func(description string) {
		op.Fail(started, time.Now(), inv.FailureCode, description, nil)
	}

	// The command's context is the operation's span: what it starts and
	// emits nests under the operation.
	c := inv.command(op.Ctx, true)
	cmd := exec.Command(inv.Argv[0], inv.Argv[1:]...)
	cmd.Env = c.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inv.Stdin, inv.Stdout, inv.Stderr
	var lines *lineRecorder
	if inv.Lines.Enabled {
		var err error
		if lines, err = newLineRecorder(op.Ctx, inv, cmd); err != nil {
			inv.Logger.Warn("--lines: output lines are not recorded", "error", err.Error())
			lines = nil
		}
	}
	// In progressotel's own process group: the command may read the
	// terminal, and gets a terminal's Ctrl-C from it as without
	// progressotel.
	child, err := procctl.New(cmd, procctl.Stop{Signal: syscall.SIGTERM, Grace: cfg.GracePeriod, InheritGroup: true})
	if err == nil {
		err = child.Start()
	}
	if err != nil {
		if lines != nil {
			lines.abort()
		}
		st := startFailure(err)
		inv.Logger.Warn("cannot run the command", "command", name, "error", err.Error())
		fail(startFailureText(name, st))
		return st
	}
	defer child.Close()
	if inv.Started != nil {
		inv.Started(cmd.Process.Pid)
	}
	if lines != nil {
		lines.started()
	}
	unforward := procctl.Forward(child, c.Signals)
	_, _ = child.Wait() // the status is in ProcessState; I/O errors are the command's
	unforward()
	if lines != nil {
		lines.wait()
	}
	st := statusOf(procctl.ExitOf(cmd.ProcessState))
	if st.OK() {
		op.Complete(started, time.Now())
	} else {
		fail(name + " " + st.String())
	}
	return st
}

// record records evt with the invocation's envelope; an error (which a
// constructor's event cannot cause) is logged.
func record(ctx context.Context, inv *Invocation, evt progress.Event) {
	evt.Envelope = inv.Envelope
	if err := inv.Recorder.Record(ctx, evt); err != nil {
		inv.Logger.Warn("event not recorded", "type", evt.Type, "error", err.Error())
	}
}

func startFailureText(name string, st Status) string {
	if st.Code == ExitNotFound {
		return name + ": command not found"
	}
	return name + ": cannot be run"
}
