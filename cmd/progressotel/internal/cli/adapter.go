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
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/semconv/v1.43.0/cicdconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/ansible"
	"github.com/progressotel/progressotel/internal/base/term"
	"github.com/progressotel/progressotel/internal/base/tooltext"
	kit "github.com/progressotel/progressotel/internal/kit/adapter"
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
	// completed: the adapter reported the operation as completed although
	// the command's status is not 0 (tofu plan -detailed-exitcode's 2).
	completed bool
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
	cfg := &kit.Config{Recorder: inv.Recorder, Envelope: inv.Envelope, Logger: inv.Logger}
	kit.Configure(cfg, cfg, kit.Defaults{Name: "progressotel", Scope: ScopeName, GracePeriod: 10 * time.Second, MaxLineBytes: maxLine},
		kit.Shared{TracerProvider: inv.TracerProvider})
	started := time.Now()
	op := cfg.StartOperation(ctx, operation, operation, started)
	fail := func(description string) {
		op.Fail(started, time.Now(), inv.FailureCode, description, nil)
	}
	failAt := func(end time.Time, description string) {
		op.Fail(started, end, inv.FailureCode, description, nil)
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
	// Output that is no file (the live view, --lines) goes through pipes
	// of our own, drained when the command exits (outputPipe).
	var pipes []*outputPipe
	// The last line of stderr says why a command failed: kept when stderr
	// goes through progressotel anyway (the live view, --lines). A stderr
	// that is a file or the terminal stays the command's own: a pipe of
	// ours would change what it sees, and a process it left behind would
	// die of SIGPIPE once progressotel has exited.
	tail := &lastLine{}
	if _, isFile := cmd.Stderr.(*os.File); !isFile {
		cmd.Stderr = io.MultiWriter(cmd.Stderr, tail)
	}
	for _, stream := range []*io.Writer{&cmd.Stdout, &cmd.Stderr} {
		if _, isFile := (*stream).(*os.File); isFile || *stream == nil {
			continue
		}
		p, perr := newOutputPipe(*stream)
		if perr != nil {
			for _, p := range pipes {
				p.close()
			}
			st := startFailure(perr)
			inv.Logger.Warn("cannot run the command", "command", name, "error", perr.Error())
			fail(name + ": cannot be run")
			return st
		}
		pipes, *stream = append(pipes, p), p.w
	}
	// In progressotel's own process group: the command may read the
	// terminal, and gets a terminal's Ctrl-C from it.
	child, err := procctl.New(cmd, procctl.Stop{Signal: syscall.SIGTERM, Grace: cfg.GracePeriod, InheritGroup: true})
	if err == nil {
		err = child.Start()
	}
	for _, p := range pipes {
		p.started()
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
	ended := time.Now()
	unforward()
	for _, p := range pipes {
		p.drain()
	}
	for _, l := range lines {
		l.flush() // a last line without a newline
	}
	procctl.Ended(&c)
	st := Status(procctl.ExitOf(cmd.ProcessState))
	switch stop := syscall.Signal(inv.sup.stopped.Load()); {
	case st.OK():
		op.Complete(started, ended)
	case stop != 0:
		// The user stopped it: cancelled, as an Ansible or OpenTofu run.
		op.FailAs(cicdconv.PipelineResultCancellation, started, ended, inv.FailureCode,
			"cancelled: "+name+" "+st.String()+" after "+signalName(stop), nil)
	default:
		description := name + " " + st.String()
		if line := tail.String(); line != "" {
			description += ": " + line
		}
		failAt(ended, description)
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

func (ansibleAdapter) Match(argv []string) bool { return cmdline.AnsibleReports(argv) }

func (a ansibleAdapter) Run(ctx context.Context, inv *Invocation) Status {
	c := inv.command(ctx, false)
	// A terminal on stdin says that ansible-playbook would prompt; runner
	// does not read it.
	c.Stdin = inv.Stdin
	_, exit, err := ansible.RunCommandLine(ctx, c, adapter.WithRecorder(inv.Recorder),
		adapter.WithTracerProvider(inv.TracerProvider), adapter.WithEnvelope(inv.Envelope),
		adapter.WithLogger(inv.Logger), ansible.WithDisplay(inv.Stdout), adapter.WithOperation(inv.Operation))
	if errors.Is(err, ansible.ErrNotInstalled) {
		inv.Logger.Warn("ansible-runner is not installed: ansible-playbook runs as a plain command, without Ansible's events (Debian: apt-get install python3-ansible-runner)")
		return commandAdapter{}.Run(ctx, inv)
	}
	var prompt *ansible.VarsPromptError
	if errors.As(err, &prompt) {
		// ansible-runner holds ansible-playbook's terminal: the user's
		// cannot reach its prompt.
		warnf(inv.Stderr, "the playbook prompts for %s, which cannot reach you under ansible-runner: it was stopped; give the answer on the command line: -e %s=VALUE", prompt.Var, prompt.Var)
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

func (terraformAdapter) Match(argv []string) bool { return cmdline.TofuReports(argv) }

func (a terraformAdapter) Run(ctx context.Context, inv *Invocation) Status {
	_, sub, _, _ := cmdline.SplitSubcommand(inv.Argv[1:])
	_, exit, err := terraform.RunCommandLine(ctx, inv.command(ctx, false), adapter.WithRecorder(inv.Recorder),
		adapter.WithTracerProvider(inv.TracerProvider), adapter.WithEnvelope(inv.Envelope),
		adapter.WithLogger(inv.Logger), terraform.WithDisplay(inv.Stdout), adapter.WithOperation(inv.Operation),
		terraform.WithSensitiveValues(sensitiveTofuValues(inv.Argv, os.Environ(), workDir())...))
	if errors.Is(err, terraform.ErrPrompts) {
		inv.Logger.Warn(cmdline.Tool(inv.Argv[0]) + " " + sub + " asks for approval, which -json cannot: its events are not reported (add -auto-approve)")
		return commandAdapter{}.Run(ctx, inv)
	}
	inv.completed = err == nil && exit.Code > 0 // -detailed-exitcode: changes present
	return launched(inv, exit, err)
}

// outputPipe carries a command's stdout or stderr to a writer that is no
// file (the live view, --lines). exec's own copy would keep the run
// waiting, up to procctl.DrainTimeout, for a process the command left in
// the background that holds the pipe; this one is drained once the
// command has exited: what it wrote is in the pipe by then. The read end
// stays open, so a process left behind blocks on a full pipe rather than
// dying of SIGPIPE, until progressotel exits.
type outputPipe struct {
	r, w *os.File
	dst  io.Writer
	done chan struct{}
}

func newOutputPipe(dst io.Writer) (*outputPipe, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p := &outputPipe{r: r, w: w, dst: dst, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		_, _ = io.Copy(dst, r) // ends at drain's deadline
	}()
	return p, nil
}

// started closes the write end, which the command now holds.
func (p *outputPipe) started() { _ = p.w.Close() }

// drain stops the copy, then copies what is left in the pipe.
func (p *outputPipe) drain() {
	_ = p.r.SetReadDeadline(time.Now())
	<-p.done
	_ = p.r.SetReadDeadline(time.Time{})
	procctl.DrainNow(p.r, p.dst)
}

// close gives up the pipe (the command did not start).
func (p *outputPipe) close() {
	_ = p.w.Close()
	p.drain()
}

// lastLine keeps the last line of text written to it that is not blank,
// cleaned of terminal escapes, for the description of a failure.
type lastLine struct {
	mu   sync.Mutex
	part []byte // the line being written, at most maxLine bytes
	last string
}

func (l *lastLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range p {
		if c == '\n' {
			l.end()
			continue
		}
		if len(l.part) < maxLine {
			l.part = append(l.part, c)
		}
	}
	return len(p), nil
}

func (l *lastLine) end() {
	if t := strings.TrimSpace(tooltext.Text(string(l.part), 512)); t != "" {
		l.last = t
	}
	l.part = l.part[:0]
}

// String is the last line, the one without a newline included.
func (l *lastLine) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.end()
	return l.last
}
