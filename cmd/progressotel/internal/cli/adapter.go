package cli

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/ansible"
	"github.com/progressotel/progressotel/internal/base/term"
	"github.com/progressotel/progressotel/internal/kit/adapter"
	"github.com/progressotel/progressotel/internal/kit/cmdline"
	"github.com/progressotel/progressotel/internal/kit/procctl"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/terraform"
)

// Adapter turns the run of a tool it knows into progress events and
// spans. `run` gives the command line to the first adapter whose Match
// accepts it (or to the one --adapter names), else to the generic command
// adapter. An adapter runs the tool through its package's own launcher
// (ansible.RunCommandLine, terraform.RunCommandLine; procctl for a plain
// command), which delivers Invocation.Signals to the command, and returns
// the command's status as it ended, never remapped.
type Adapter interface {
	// Name names the adapter, for --adapter and messages.
	Name() string
	// Match reports whether the adapter handles argv, the command line
	// after "--"; argv[0] is the command as given, a name or a path.
	Match(argv []string) bool
	// Run runs argv and reports it inside the span of ctx, framed by
	// common/OperationStarted and common/OperationCompleted or Failed.
	Run(ctx context.Context, inv *Invocation) Status
}

// Invocation is what an adapter runs, and with what.
type Invocation struct {
	// Command is the command line after "--", with progressotel's own
	// stdin and stderr, the signals for it (see supervisor) and the Started
	// and Exited hooks (Exited: before the final event); command sets its
	// environment.
	procctl.Command
	// EnvFor is the child's environment for the span of ctx: progressotel's
	// own, with that trace context (TRACEPARENT, X_TRACECTX_*, ...) and the
	// run's socket.
	EnvFor func(ctx context.Context) []string
	// Operation names the operation of the common events (--operation);
	// "": the adapter's default.
	Operation   string
	FailureCode string            // the failureCode of OperationFailed (--failure-code)
	Envelope    progress.Envelope // every event's envelope
	// Recorder records the events: the run's, which numbers them with the
	// emits of the child in one sequence.
	Recorder       *progress.Recorder
	TracerProvider trace.TracerProvider // makes the adapter's spans
	Stdout         io.Writer            // progressotel's own
	Logger         *slog.Logger         // the adapter's warnings, on stderr
	Lines          LinesOptions         // --lines, for the generic adapter

	sup *supervisor
}

// command is the procctl.Command of the invocation, its environment in
// the span of ctx; sharesGroup says whether the command runs in
// progressotel's process group (see supervisor).
func (inv *Invocation) command(ctx context.Context, sharesGroup bool) procctl.Command {
	inv.sup.sharesGroup.Store(sharesGroup)
	c := inv.Command
	c.Env = inv.EnvFor(ctx)
	if f, ok := c.Stdin.(*os.File); ok && !sharesGroup && term.IsTerminal(f) {
		c.Stdin = nil // a background group reading the terminal would get SIGTTIN
	}
	return c
}

// launched is the status of a command an adapter's launcher ran. When
// nothing ran (the package has reported the operation as failed), it is
// the shell's status of a start failure.
func launched(inv *Invocation, exit procctl.Exit, err error) Status {
	if exit.Code == -1 && exit.Signal == 0 {
		inv.Logger.Warn("cannot run the command", "command", cmdline.Tool(inv.Argv[0]), "error", err.Error())
		return startFailure(err)
	}
	return Status(exit)
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
	return nil, invalidf("--adapter %q: unknown (known: auto, none, %s)", name, adapterNames())
}

// adapterNames lists the registered adapters, for --help and errors.
func adapterNames() string {
	names := make([]string, len(adapters))
	for i, a := range adapters {
		names[i] = a.Name()
	}
	return strings.Join(names, ", ")
}

const commandAdapterName = "command"

// commandAdapter runs any command: the operation events around it and,
// with --lines, one event per line of its output.
type commandAdapter struct{}

func (commandAdapter) Name() string        { return commandAdapterName }
func (commandAdapter) Match([]string) bool { return true }

func (commandAdapter) Run(ctx context.Context, inv *Invocation) Status {
	name := filepath.Base(inv.Argv[0])
	operation := cmp.Or(inv.Operation, name)
	cfg := &adapter.Config{Recorder: inv.Recorder, Envelope: inv.Envelope, Logger: inv.Logger}
	adapter.Configure(cfg, cfg, adapter.Defaults{Name: "progressotel", Scope: ScopeName, GracePeriod: 10 * time.Second, MaxLineBytes: maxLine},
		[]func(*adapter.Config){func(c *adapter.Config) { c.SetTracerProvider(inv.TracerProvider) }})
	started := time.Now()
	op := cfg.StartOperation(ctx, operation, operation, started)
	fail := func(description string) {
		op.Fail(started, time.Now(), inv.FailureCode, description, nil)
	}

	// In the operation's span: what the command starts and emits nests under it.
	c := inv.command(op.Ctx, true)
	cmd := exec.Command(inv.Argv[0], inv.Argv[1:]...)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Env, c.Stdin, inv.Stdout, inv.Stderr
	var lines []*lineRecorder
	if inv.Lines.Enabled {
		stdout := &lineRecorder{ctx: op.Ctx, inv: inv, stream: "stdout", dst: inv.Stdout, redactor: cfg.Redactor}
		stderr := &lineRecorder{ctx: op.Ctx, inv: inv, stream: "stderr", dst: inv.Stderr, redactor: cfg.Redactor}
		cmd.Stdout, cmd.Stderr, lines = stdout, stderr, []*lineRecorder{stdout, stderr}
	}
	// In progressotel's own process group: the command may read the
	// terminal, and gets a terminal's Ctrl-C from it.
	child, err := procctl.New(cmd, procctl.Stop{Signal: syscall.SIGTERM, Grace: cfg.GracePeriod, InheritGroup: true})
	if err == nil {
		err = child.Start()
	}
	if err != nil {
		st := startFailure(err)
		inv.Logger.Warn("cannot run the command", "command", name, "error", err.Error())
		if st.Code == ExitNotFound {
			fail(name + ": command not found")
		} else {
			fail(name + ": cannot be run")
		}
		return st
	}
	defer child.Close()
	if inv.Started != nil {
		inv.Started(cmd.Process.Pid)
	}
	unforward := procctl.Forward(child, c.Signals)
	_, _ = child.Wait() // the status is in ProcessState; I/O errors are the command's
	unforward()
	for _, l := range lines {
		l.flush() // a last line without a newline
	}
	c.Ended()
	st := Status(procctl.ExitOf(cmd.ProcessState))
	if st.OK() {
		op.Complete(started, time.Now())
	} else {
		fail(name + " " + st.String())
	}
	return st
}

// ansibleAdapter reports Ansible runs with package ansible, from
// ansible-runner's job events: each is recorded live, in the playbook →
// play → task → host spans under the run's span, as for ansible.Run. The
// command line runs through ansible.RunCommandLine; without ansible-runner
// it runs as a plain command, with a warning. stdout shows what Ansible
// would have printed.
type ansibleAdapter struct{}

func (ansibleAdapter) Name() string { return "ansible" }

func (ansibleAdapter) Match(argv []string) bool { return ansible.Reports(argv) }

func (a ansibleAdapter) Run(ctx context.Context, inv *Invocation) Status {
	_, exit, err := ansible.RunCommandLine(ctx, inv.command(ctx, false), ansible.WithRecorder(inv.Recorder),
		ansible.WithTracerProvider(inv.TracerProvider), ansible.WithEnvelope(inv.Envelope),
		ansible.WithLogger(inv.Logger), ansible.WithDisplay(inv.Stdout), ansible.WithOperation(inv.Operation))
	if errors.Is(err, ansible.ErrNotInstalled) {
		inv.Logger.Warn("ansible-runner is not installed: ansible-playbook runs as a plain command, without Ansible's events (Debian: apt-get install python3-ansible-runner)")
		return commandAdapter{}.Run(ctx, inv)
	}
	var prompt *ansible.VarsPromptError
	if errors.As(err, &prompt) {
		inv.Logger.Warn("the playbook prompts for a variable, which a run cannot answer: it was stopped (give the variable with -e)", "var", prompt.Var)
	}
	return launched(inv, exit, err)
}

// terraformAdapter reports OpenTofu and Terraform runs with package
// terraform, through terraform.RunCommandLine: it adds -json (and neither
// -auto-approve nor -input=false) and records each message of the tool's
// machine-readable UI live, in a span per resource operation. An apply or
// destroy that would prompt for approval cannot run with -json: it runs as
// a plain command, with a warning.
type terraformAdapter struct{}

func (terraformAdapter) Name() string { return "terraform" }

func (terraformAdapter) Match(argv []string) bool { return terraform.Reports(argv) }

func (a terraformAdapter) Run(ctx context.Context, inv *Invocation) Status {
	_, sub, _, _ := cmdline.SplitSubcommand(inv.Argv[1:])
	_, exit, err := terraform.RunCommandLine(ctx, inv.command(ctx, false), terraform.WithRecorder(inv.Recorder),
		terraform.WithTracerProvider(inv.TracerProvider), terraform.WithEnvelope(inv.Envelope),
		terraform.WithLogger(inv.Logger), terraform.WithDisplay(inv.Stdout), terraform.WithOperation(inv.Operation),
		terraform.WithSensitiveValues(sensitiveTofuValues(inv.Argv, os.Environ(), workDir())...))
	if errors.Is(err, terraform.ErrPrompts) {
		inv.Logger.Warn(cmdline.Tool(inv.Argv[0]) + " " + sub + " asks for approval, which -json cannot: its events are not reported (add -auto-approve)")
		return commandAdapter{}.Run(ctx, inv)
	}
	return launched(inv, exit, err)
}
