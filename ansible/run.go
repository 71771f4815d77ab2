package ansible

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// Run runs a playbook with ansible-runner and records its events live,
// each when Ansible emits it, as progress events inside a playbook span
// (a child of the span in ctx) with play, task and per-host spans under it.
// See the package documentation for the events and spans.
//
// The run uses a private temporary directory (mode 0700) for the extra
// variables and ansible-runner's artifacts, which hold the whole
// environment and the gathered facts; it is removed when Run returns,
// unless WithKeepArtifacts is given.
//
// Cancelling ctx stops the run: SIGTERM to ansible-runner, which stops
// ansible-playbook cleanly, then after the grace period (WithGracePeriod)
// SIGKILL to every process of the run. Run returns once they are gone.
// A vars_prompt that no extra variable answers stops the run the same way,
// at once, instead of leaving it waiting for an answer.
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
	runner := cfg.runner
	if runner == "" {
		if runner, err = exec.LookPath("ansible-runner"); err != nil {
			return fail(fmt.Errorf("%w: %w", ErrNotInstalled, err), "Ansible is not installed")
		}
	}

	dir, err := os.MkdirTemp(cfg.tempDir, "progressotel-ansible-")
	if err != nil {
		return fail(fmt.Errorf("ansible: private directory: %w", err), "the run could not be prepared")
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

	cmd := exec.Command(runner, runnerArgs(dir, paths, pb)...)
	cmd.Dir = dir
	cmd.Env = runEnv(pb.Env)
	stderr := &tailWriter{max: 64 << 10}
	cmd.Stderr = stderr
	child, err := procctl.New(cmd, procctl.Stop{
		// SIGTERM to ansible-runner, which stops ansible-playbook cleanly.
		Signal: syscall.SIGTERM,
		Grace:  cfg.GracePeriod,
		// ansible-playbook runs in a session of its own (runner starts it
		// on a pseudo-terminal), so killing runner's group alone would
		// leave it running: its group is found from the pid in the events
		// and, on Linux, from the process table while runner is alive.
		Others: func(runnerPID int) []int {
			groups := procctl.DescendantGroups(runnerPID)
			if pid := int(d.pid.Load()); pid > 0 {
				groups = append(groups, pid) // a session leader: its pid is its group
			}
			return groups
		},
	})
	if err != nil {
		return fail(fmt.Errorf("ansible: %w", err), "the run could not be prepared")
	}
	defer child.Close()
	if err := child.Start(); err != nil {
		return fail(fmt.Errorf("ansible: starting %s: %w", runner, err), "Ansible could not be started")
	}
	d.onPrompt = func(string) { child.Stop() }
	unwatch := context.AfterFunc(ctx, child.Stop)

	// Cancelling does not stop the reading: the events of a run that is
	// being stopped are still reported, until its output ends.
	readErr := readAll(context.Background(), child.Stdout, d)
	signalled, waitErr := child.Wait()
	unwatch()
	cancelled := signalled && ctx.Err() != nil
	ended := time.Now().UTC()
	rc := -1
	if cmd.ProcessState != nil {
		rc = procctl.ExitCode(cmd.ProcessState)
	}
	if readErr != nil && !errors.Is(readErr, os.ErrDeadlineExceeded) {
		cfg.Logger.Warn("ansible: reading ansible-runner's output", "error", readErr.Error())
	}
	if waitErr != nil && cmd.ProcessState == nil {
		cfg.Logger.Warn("ansible: waiting for ansible-runner", "error", waitErr.Error())
	}

	// What went wrong, most specific first.
	output := strings.TrimSpace(d.output.String() + "\n" + cleanText(stderr.String(), 64<<10))
	o := runEnd{start: started, end: ended, rc: rc}
	var runErr error
	switch {
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
		if line := errorLine(output); line != "" {
			runErr = &PlaybookError{Playbook: pb.Playbook, Reason: line, Output: output}
			o.code, o.reason = FailureInternal, "playbook "+d.pbName+" could not be loaded by Ansible: "+line
		}
	}
	o.err = runErr
	res := d.finish(o)
	if cfg.keep {
		keep = true
		res.ArtifactDir = dir
	}
	switch {
	case runErr != nil:
		return res, runErr
	case rc != 0:
		return res, &ExitError{ExitCode: rc, FailedHosts: res.FailedHosts, UnreachableHosts: res.UnreachableHosts, Output: output}
	case res.StatsRebuilt:
		return res, ErrStatsMissing
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

// runEnv is the current environment with the playbook's additions. Run
// asks Ansible to show task arguments (runner then reports them, and marks
// no_log tasks at their start) and not to colour its text; the playbook's
// Env can override both.
func runEnv(extra map[string]string) []string {
	env := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := env[k]; !ok {
			order = append(order, k)
		}
		env[k] = v
	}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			set(k, v)
		}
	}
	set("ANSIBLE_DISPLAY_ARGS_TO_STDOUT", "True")
	set("ANSIBLE_NOCOLOR", "True")
	for k, v := range extra {
		set(k, v)
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+env[k])
	}
	return out
}

// writeExtraVars writes the extra variables where ansible-runner reads
// them (env/extravars, JSON being YAML), readable by the owner only.
func writeExtraVars(dir string, vars map[string]any) error {
	if len(vars) == 0 {
		return nil
	}
	b, err := json.Marshal(vars)
	if err != nil {
		return fmt.Errorf("ansible: extra vars: %w", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "env"), 0o700); err != nil {
		return fmt.Errorf("ansible: extra vars: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "env", "extravars"), b, 0o600); err != nil {
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
