package cli

import (
	"context"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/progress"
)

// Adapter turns the run of a tool it knows into progress events and
// spans. `run` gives the command line to the first registered adapter
// whose Match accepts it (or to the one --adapter names), else to the
// generic command adapter.
//
// An adapter owns what the tool's output means; the run owns the process
// rules: the adapter starts each process with Invocation.Start and waits
// for it with Invocation.Wait, so that signals are forwarded as for any
// command, and it returns the status of the command as it ended, never
// remapped.
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
	// Env is the child's environment: progressotel's own, with the run's
	// trace context (TRACEPARENT, X_TRACECTX_*, ...) and socket.
	Env []string
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

	sup *supervisor
}

// Start starts cmd under the run's signal rules.
func (inv *Invocation) Start(cmd *exec.Cmd) error { return inv.sup.start(cmd) }

// Wait waits for cmd, started by Start, and returns how it ended.
func (inv *Invocation) Wait(cmd *exec.Cmd) Status { return inv.sup.wait(cmd) }

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
	record(ctx, inv, progress.OperationStarted(operation))
	started := time.Now()

	cmd := exec.Command(inv.Argv[0], inv.Argv[1:]...)
	cmd.Env = inv.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inv.Stdin, inv.Stdout, inv.Stderr
	var lines *lineRecorder
	if inv.Lines.Enabled {
		var err error
		if lines, err = newLineRecorder(ctx, inv, cmd); err != nil {
			inv.Logger.Warn("--lines: output lines are not recorded", "error", err.Error())
			lines = nil
		}
	}
	if err := inv.Start(cmd); err != nil {
		if lines != nil {
			lines.abort()
		}
		st := startFailure(err)
		inv.Logger.Warn("cannot run the command", "command", name, "error", err.Error())
		record(ctx, inv, progress.OperationFailed(operation, inv.FailureCode, startFailureText(name, st)))
		return st
	}
	if lines != nil {
		lines.started()
	}
	st := inv.Wait(cmd)
	if lines != nil {
		lines.wait()
	}
	if st.OK() {
		record(ctx, inv, progress.OperationCompleted(operation, time.Since(started)))
	} else {
		record(ctx, inv, progress.OperationFailed(operation, inv.FailureCode, name+" "+st.String()))
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
