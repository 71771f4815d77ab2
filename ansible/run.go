package ansible

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/progressotel/progressotel/internal/kit/cmdline"
	"github.com/progressotel/progressotel/internal/kit/procctl"
)

// runIdent is ansible-runner's ident for the run: the private directory is
// the run's own, so a fixed name is unique.
const runIdent = "run"

// Run runs a playbook with ansible-runner and records its events live as
// progress events inside a playbook span (a child of the span in ctx) with
// play, task and per-host spans under it (see the package documentation).
// The extra variables and runner's artifacts, which hold the whole
// environment and the gathered facts, are in a private temporary directory
// (mode 0700), removed when Run returns unless WithKeepArtifacts is given.
//
// Cancelling ctx stops the run: SIGTERM to ansible-runner, which stops
// ansible-playbook cleanly, then after the grace period (WithGracePeriod)
// SIGKILL to every process of the run; Run returns once they are gone. A
// vars_prompt that no extra variable answers stops the run the same way.
//
// The error is nil when the run ended with status 0. Otherwise it is
// ErrNotInstalled, a *PlaybookError (missing or unparseable playbook), a
// *VarsPromptError, an error wrapping ctx's error, or an *ExitError (failed
// or unreachable hosts, among others). The Result holds what was reported
// in every case, and every run is reported as common/OperationStarted then
// common/OperationCompleted or common/OperationFailed.
func Run(ctx context.Context, pb Playbook, opts ...Option) (Result, error) {
	cfg := newConfig(opts)
	d := newDecoder(ctx, cfg)
	d.pbName = filepath.Base(pb.Playbook)
	started := time.Now().UTC()
	fail := func(err error, reason string) (Result, error) {
		res := d.finish(runEnd{start: started, end: time.Now().UTC(), rc: -1, err: err,
			code: FailureInternal, reason: reason})
		return res, err
	}

	if err := ctx.Err(); err != nil {
		return fail(fmt.Errorf("ansible: run of %s not started: %w", d.pbName, context.Cause(ctx)), "cancelled")
	}
	if !runSupported {
		return fail(errors.New("ansible: Run needs a POSIX system; Stream works everywhere"), "Ansible cannot run on this system")
	}
	paths, err := pb.resolve()
	if err != nil {
		var pe *PlaybookError
		if errors.As(err, &pe) && errors.Is(err, fs.ErrNotExist) {
			return fail(err, "playbook "+d.pbName+" not found")
		}
		return fail(err, "playbook "+d.pbName+" cannot be run")
	}
	runner, dir, err := cfg.prepare()
	if errors.Is(err, ErrNotInstalled) {
		return fail(err, "Ansible is not installed")
	} else if err != nil {
		return fail(err, "the run could not be prepared")
	}
	keep := false
	defer func() {
		if !keep {
			_ = os.RemoveAll(dir)
		}
	}()
	if err := writeExtraVars(dir, pb.ExtraVars); err != nil {
		return fail(err, "the run could not be prepared")
	}

	env := append(os.Environ(), runSettings...)
	for k, v := range pb.Env {
		env = append(env, k+"="+v)
	}
	l := d.launch(ctx, launch{runner: runner, args: runnerArgs(dir, paths, pb), dir: dir, env: env})
	res, runErr := d.conclude(ctx, pb.Playbook, started, l)
	if cfg.keep {
		keep = true
		res.ArtifactDir = dir
	}
	return res, runErr
}

// prepare finds ansible-runner, unless WithRunnerPath names it, and makes
// the run's private directory.
func (c *config) prepare() (runner, dir string, err error) {
	if runner = c.runner; runner == "" {
		if runner, err = exec.LookPath("ansible-runner"); err != nil {
			return "", "", fmt.Errorf("%w: %w", ErrNotInstalled, err)
		}
	}
	if dir, err = os.MkdirTemp(c.tempDir, "progressotel-ansible-"); err != nil {
		return "", "", fmt.Errorf("ansible: private directory: %w", err)
	}
	return runner, dir, nil
}

// launch is how one ansible-runner process is started.
type launch struct {
	runner string
	args   []string
	dir    string // the working directory; "": the current one
	env    []string
	stdin  io.Reader
	stderr io.Writer // the user's, beside the tail kept for errors; nil: none
	sigs   <-chan os.Signal
	// playbook: the command wraps ansible-playbook (the user's command),
	// whose groups the signals go to.
	playbook bool
	started  func(pid int) // nil: not told
}

// launched is how it ended.
type launched struct {
	err       error // it could not be started
	ps        *os.ProcessState
	exit      procctl.Exit
	signalled bool // stopped by ctx or a vars_prompt
	delivered syscall.Signal
	ended     time.Time
	output    string // runner's and Ansible's text outside the events
}

// launch runs ansible-runner once under procctl, feeding its stdout to
// d line by line (the one read of the stream), and stops it when ctx is
// done or the playbook prompts: SIGTERM to ansible-runner, which stops
// ansible-playbook, then after the grace period SIGKILL to every process of
// the run. Signals from l.sigs go to the user's command.
func (d *decoder) launch(ctx context.Context, l launch) launched {
	cfg := d.cfg
	cmd := exec.Command(l.runner, l.args...)
	cmd.Dir = l.dir
	cmd.Env = l.env
	cmd.Stdin = l.stdin
	stderr := &tailWriter{max: 64 << 10}
	cmd.Stderr = stderr
	if l.stderr != nil {
		cmd.Stderr = io.MultiWriter(l.stderr, stderr)
	}
	// ansible-playbook runs in a session of its own (runner starts it on
	// a pseudo-terminal), so killing runner's group alone would leave it
	// running: its group (a session leader's pid) is found from the pid in
	// the events and, on Linux, from the process table while runner is
	// alive.
	stop := procctl.Stop{Signal: syscall.SIGTERM, Grace: cfg.GracePeriod, Others: func(runnerPID int) []int {
		groups := procctl.DescendantGroups(runnerPID)
		if pid := int(d.pid.Load()); pid > 0 {
			groups = append(groups, pid)
		}
		return groups
	}}
	if l.playbook {
		stop.Target = func(runnerPID int) []int {
			if pid := int(d.pid.Load()); pid > 0 {
				return []int{pid}
			}
			return procctl.DescendantGroups(runnerPID)
		}
	}
	child, err := procctl.New(cmd, stop)
	if err == nil {
		defer child.Close()
		if err = child.Start(); err != nil {
			err = fmt.Errorf("starting %s: %w", l.runner, err)
		}
	}
	if err != nil {
		return launched{err: fmt.Errorf("ansible: %w", err), ended: time.Now().UTC(), exit: procctl.Exit{Code: -1}}
	}
	if l.started != nil {
		l.started(cmd.Process.Pid)
	}
	d.onPrompt = child.Stop
	unwatch := context.AfterFunc(ctx, child.Stop)
	unforward := procctl.Forward(child, l.sigs)

	// Cancelling does not stop the reading: the events of a run that is
	// being stopped are still reported, until its output ends.
	readErr := readAll(context.Background(), child.Stdout, d)
	signalled, waitErr := child.Wait()
	unforward()
	unwatch()
	out := launched{ended: time.Now().UTC(), ps: cmd.ProcessState, signalled: signalled,
		delivered: child.Delivered(), exit: procctl.ExitOf(cmd.ProcessState)}
	if readErr != nil && !errors.Is(readErr, os.ErrDeadlineExceeded) {
		cfg.Logger.Warn("ansible: reading ansible-runner's output", "error", readErr.Error())
	}
	if waitErr != nil && cmd.ProcessState == nil {
		cfg.Logger.Warn("ansible: waiting for ansible-runner", "error", waitErr.Error())
	}
	out.output = strings.TrimSpace(d.output.String() + "\n" + cleanText(stderr.String(), 64<<10))
	return out
}

// conclude records the end of a run that launch ran and returns its
// Result and error, as Run documents them.
func (d *decoder) conclude(ctx context.Context, playbook string, started time.Time, l launched) (Result, error) {
	rc := -1
	if l.ps != nil {
		rc = procctl.ExitCode(l.ps)
	}
	cancelled := l.signalled && ctx.Err() != nil
	// What went wrong, most specific first.
	o := runEnd{start: started, end: l.ended, rc: rc}
	var runErr error
	switch {
	case l.err != nil:
		runErr = l.err
		o.code, o.reason = FailureInternal, "Ansible could not be started"
	case d.varPrompt != "" && !d.statsSeen:
		runErr = &VarsPromptError{Var: d.varPrompt}
		o.code, o.reason = FailureInternal, promptReason(d.varPrompt)
	case cancelled:
		runErr = fmt.Errorf("ansible: run of %s cancelled: %w", d.pbName, context.Cause(ctx))
		o.code, o.reason, o.cancelled = FailureInternal, "cancelled", true
	case len(d.plays) == 0 && rc != 0:
		// Ansible stopped before any play: it could not load the playbook
		// (before any event) or resolve it (an error event after the
		// playbook's start, such as an undefined variable in hosts).
		if line := errorLine(l.output); line != "" {
			runErr = &PlaybookError{Playbook: playbook, Reason: line, Output: l.output}
			o.code, o.reason = FailureInternal, "playbook "+d.pbName+" could not be loaded by Ansible: "+line
		}
	}
	if runErr == nil && !d.statsSeen {
		// Runner's own status can hide it (it exits 0 when the playbook
		// was killed by a signal): a run without Ansible's recap did not
		// finish.
		reason := "the run ended before Ansible's recap"
		if l.exit.Signal != 0 {
			reason = "ansible-playbook killed by signal " + l.exit.Signal.String()
		} else if rc > 0 {
			reason = fmt.Sprintf("ansible-playbook ended with status %d before its recap", rc)
		}
		runErr = ErrStatsMissing
		o.code, o.reason = FailureInternal, reason
	}
	o.err = runErr
	res := d.finish(o)
	switch {
	case runErr != nil && (rc == 0 || !errors.Is(runErr, ErrStatsMissing)):
		return res, runErr
	case rc != 0:
		return res, &ExitError{ExitCode: rc, FailedHosts: res.FailedHosts, UnreachableHosts: res.UnreachableHosts, Output: l.output}
	}
	return res, nil
}

// runnerArgs builds ansible-runner's command line. Nothing secret goes on
// it: extra variables are in the private directory.
func runnerArgs(dir string, p resolved, pb Playbook) []string {
	args := []string{"run", dir, "--json", "--ident", runIdent,
		"--project-dir", p.project, "--playbook", p.playbook}
	if p.inventory != "" {
		args = append(args, "--inventory", p.inventory)
	}
	if pb.Limit != "" {
		args = append(args, "--limit", pb.Limit)
	}
	if len(pb.Args) > 0 {
		args = append(args, "--cmdline", cmdline.ShellQuote(pb.Args))
	}
	return args
}

// runSettings ask Ansible to show task arguments (runner then reports
// them, and marks no_log tasks at their start) and not to colour its text.
// exec.Cmd takes a variable's last value: Run puts them before the
// playbook's Env, RunCommandLine before the user's environment, which win.
var runSettings = []string{"ANSIBLE_DISPLAY_ARGS_TO_STDOUT=True", "ANSIBLE_NOCOLOR=True"}

// writeExtraVars writes the extra variables where ansible-runner reads
// them (env/extravars, JSON being YAML), readable by the owner only.
func writeExtraVars(dir string, vars map[string]any) error {
	if len(vars) == 0 {
		return nil
	}
	b, err := json.Marshal(vars)
	if err == nil {
		err = os.Mkdir(filepath.Join(dir, "env"), 0o700)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "env", "extravars"), b, 0o600)
	}
	if err != nil {
		return fmt.Errorf("ansible: extra vars: %w", err)
	}
	return nil
}

// errorLine returns Ansible's error from its output: the first line
// starting with "ERROR!", without it, and where Ansible found the error
// ("line 3, column 17") when it says. For a playbook that is not valid
// YAML, whose first line is only "We were unable to read either as JSON
// nor YAML", it is the YAML parser's own words that say what is wrong.
func errorLine(output string) string {
	var msg, cause, where string
	lines := strings.Split(output, "\n")
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if rest, ok := strings.CutPrefix(l, "ERROR!"); ok && msg == "" {
			msg = strings.TrimSpace(rest)
		}
		if l == "Syntax Error while loading YAML." && cause == "" {
			for _, next := range lines[i+1:] {
				if next = strings.TrimSpace(next); next != "" {
					cause = next
					break
				}
			}
		}
		if _, after, ok := strings.Cut(l, "The error appears to be in '"); ok && where == "" {
			if _, loc, ok := strings.Cut(after, "': "); ok {
				where = strings.TrimSuffix(strings.TrimSuffix(loc, ", but may"), ",")
			}
		}
	}
	if msg != "" && cause != "" {
		msg = "Syntax Error while loading YAML: " + cause
	}
	if msg != "" && where != "" {
		msg += " (" + where + ")"
	}
	return msg
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
