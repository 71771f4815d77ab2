package terraform

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/base/tooltext"
	"github.com/progressotel/progressotel/internal/kit/cmdline"
	"github.com/progressotel/progressotel/internal/kit/procctl"
)

// maxStderr bounds the tail of stderr kept for errors.
const maxStderr = 16 << 10

// Run runs the tofu or terraform CLI with -json and records its
// machine-readable UI live in a command span ("tofu apply", a child of the
// span in ctx). Cancelling ctx stops the tool as Ctrl-C does, SIGINT to its
// process group so that it writes its state, and SIGKILL after the grace
// period (adapter.WithGracePeriod); Run returns once the tool has exited and what
// is left of its group is killed.
//
// The error is nil when the tool exited with status 0 (or 2 under
// -detailed-exitcode, "changes present"), else an *OperationError naming
// the error diagnostics, which wraps ctx's error for a cancelled run and
// ErrNotInstalled when no tool was found. The Result holds what was
// reported in every case.
func Run(ctx context.Context, c Command, opts ...Option) (Result, error) {
	cfg := newConfig(opts)
	for _, v := range c.SensitiveVars {
		cfg.sensitive = sensitiveStrings(v, cfg.sensitive)
	}
	global, sub, rest, splitErr := c.split()
	binary, binErr := c.binary()
	tool := "terraform"
	if binErr == nil {
		tool = filepath.Base(binary)
	}
	d := newRunDecoder(ctx, cfg, tool, sub)
	fail := func(err error) (Result, error) {
		return d.finish(outcome{end: time.Now(), exit: noExit, cause: err})
	}
	if err := cmp.Or(splitErr, binErr); err != nil {
		return fail(err)
	} else if ctx.Err() != nil {
		return fail(ctxCause(ctx))
	}

	var varFile string
	if len(c.Vars) > 0 || len(c.SensitiveVars) > 0 {
		dir, err := os.MkdirTemp("", "progressotel-terraform-")
		if err != nil {
			return fail(fmt.Errorf("terraform: private directory: %w", err))
		}
		defer os.RemoveAll(dir)
		if varFile, err = c.writeVarFile(dir); err != nil {
			return fail(err)
		}
	}
	env := d.toolTraceEnv(append(append(os.Environ(), "TF_IN_AUTOMATION=1"), c.Env...), tool)

	if c.Init {
		initCtx, initSpan := cfg.Tracer.Start(d.cmdCtx, tool+" init",
			trace.WithAttributes(attribute.String("terraform.command", "init")))
		saved := d.cmdCtx
		d.cmdCtx = initCtx
		initArgv := append([]string{binary}, args(global, "init", nil, "")...)
		o := d.runProcess(ctx, procctl.Command{Argv: initArgv, Env: env}, c.Dir)
		d.cmdCtx = saved
		if o.exit.ExitCode() != 0 || o.cause != nil {
			initSpan.SetStatus(codes.Error, "init failed")
			initSpan.End()
			o.failed, o.end = true, time.Now()
			return d.finish(o)
		}
		initSpan.End()
	}
	argv := append([]string{binary}, args(global, sub, rest, varFile)...)
	return d.finish(d.runProcess(ctx, procctl.Command{Argv: argv, Env: env}, c.Dir).of(rest))
}

// newRunDecoder is the decoder of a run of the tool's subcommand, begun now.
func newRunDecoder(ctx context.Context, cfg *config, tool, sub string) *decoder {
	d := newDecoder(ctx, cfg, cmp.Or(cfg.Operation, sub, "terraform"), strings.TrimSpace(tool+" "+sub),
		attribute.String("terraform.command", sub))
	d.reports = slices.Contains(cmdline.TofuReporting, sub)
	d.begin(time.Now())
	return d
}

// of ends the outcome of a subcommand's process with the arguments rest
// now, failed for a status other than 0, or 2 under -detailed-exitcode
// ("changes present").
func (o outcome) of(rest []string) outcome {
	o.end = time.Now()
	code := o.exit.ExitCode()
	o.failed = code != 0 && !(code == 2 && cmdline.HasFlag(rest, "detailed-exitcode"))
	return o
}

// runProcess runs the tool once in dir, decoding its stdout live, and stops
// it when ctx is done, as Run says. Its stderr is logged unless c.Stderr
// gets it.
func (d *decoder) runProcess(ctx context.Context, c procctl.Command, dir string) outcome {
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, c.Env, c.Stdin
	stderr := &stderrLog{d: d, quiet: c.Stderr != nil}
	cmd.Stderr = stderr
	if c.Stderr != nil {
		cmd.Stderr = io.MultiWriter(c.Stderr, stderr)
	}
	notStarted := func(err error) outcome { return outcome{exit: noExit, cause: err} }
	child, err := procctl.New(cmd, procctl.Stop{
		Signal: os.Interrupt,
		Group:  true,
		Grace:  d.cfg.GracePeriod,
		OnSignalError: func(err error) {
			d.cfg.Logger.Warn("terraform: interrupting the tool", "error", err.Error())
		},
		OnGraceExpired: func() {
			d.cfg.Logger.Warn("terraform: the tool did not stop within the grace period: killing it", "grace", d.cfg.GracePeriod.String())
		},
	})
	if err != nil {
		return notStarted(fmt.Errorf("terraform: %w", err))
	}
	defer child.Close()
	if err := child.Start(); err != nil {
		return notStarted(fmt.Errorf("terraform: starting %s: %w", c.Argv[0], err))
	}
	if c.Started != nil {
		c.Started(cmd.Process.Pid)
	}
	unwatch := context.AfterFunc(ctx, child.Stop)
	unforward := procctl.Forward(child, c.Signals)

	// Cancelling does not stop the reading: what a stopping tool writes (its
	// interrupt notice, errored operations, diagnostics) is reported.
	readErr := readAll(context.Background(), child.Stdout, d)
	signalled, _ := child.Wait()
	unforward()
	unwatch()
	procctl.Ended(&c)
	if readErr != nil && !errors.Is(readErr, os.ErrDeadlineExceeded) {
		d.cfg.Logger.Warn("terraform: reading the tool's output", "error", readErr.Error())
	}

	o := outcome{exit: procctl.ExitOf(cmd.ProcessState), stderr: stderr.tail()}
	if signalled {
		o.cause = ctxCause(ctx)
	}
	return o
}

// stderrLog receives the tool's stderr: each line is logged (redacted) as
// a warning, and the last lines are kept for errors.
type stderrLog struct {
	d     *decoder
	quiet bool // the user sees stderr as it is: keep the tail, log nothing
	mu    sync.Mutex
	part  []byte   // an unfinished line
	lines []string // the tail, at most maxStderr bytes
	size  int
}

func (s *stderrLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.part = append(s.part, p...)
	for {
		i := bytes.IndexByte(s.part, '\n')
		if i < 0 {
			if len(s.part) > maxStderr {
				s.line(s.part)
				s.part = s.part[:0]
			}
			return len(p), nil
		}
		s.line(s.part[:i])
		s.part = s.part[i+1:]
	}
}

func (s *stderrLog) line(b []byte) {
	text := tooltext.Line(s.d.scrub.text(string(b)))
	if strings.TrimSpace(text) == "" {
		return
	}
	// The tool's own log (TF_LOG) goes to stderr too: its lines are
	// debugging, not warnings.
	switch {
	case s.quiet:
	case strings.Contains(text, "[TRACE]") || strings.Contains(text, "[DEBUG]") || strings.Contains(text, "[INFO]"):
		s.d.cfg.Logger.Debug("terraform: stderr", "line", text)
	default:
		s.d.cfg.Logger.Warn("terraform: stderr", "line", text)
	}
	s.lines = append(s.lines, text)
	s.size += len(text) + 1
	for s.size > maxStderr && len(s.lines) > 1 {
		s.size -= len(s.lines[0]) + 1
		s.lines = s.lines[1:]
	}
}

func (s *stderrLog) tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.part) > 0 {
		s.line(s.part)
		s.part = nil
	}
	return strings.TrimSpace(strings.Join(s.lines, "\n"))
}
