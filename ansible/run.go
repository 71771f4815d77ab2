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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/progressotel/progressotel/internal/kit/cmdline"
	"github.com/progressotel/progressotel/internal/kit/procctl"
)

// runIdent is ansible-runner's ident for the run: the private directory is
// the run's own, so a fixed name is unique.
const runIdent = "run"

// Playbook says what Run runs.
type Playbook struct {
	// Playbook is the playbook file, relative to ProjectDir or absolute:
	// required.
	Playbook string
	// ProjectDir holds the playbook, its roles and files; "": its directory.
	ProjectDir string
	// Inventory is an inventory file or directory. Empty: Ansible's
	// default (its configured inventory, else an implicit localhost).
	Inventory string
	// Limit restricts the run to the hosts matching this pattern (--limit).
	Limit string
	// ExtraVars are Ansible's extra variables (-e), which take precedence
	// over every other variable and skip the matching vars_prompt. They go
	// to a file in the run's private directory, never on a command line.
	ExtraVars map[string]any
	// Env adds to, or overrides, the environment that ansible-runner and
	// Ansible get: of the current process's, only what they need to run
	// (PATH, HOME, the locale, ANSIBLE_* settings, the SSH agent, ...; see
	// runnerVars), since ansible-runner writes its environment into the
	// private directory. Credentials of inventory plugins and anything
	// else a playbook reads from its environment go here.
	Env map[string]string
	// Args are more ansible-playbook arguments (--tags, --check, -v, ...).
	Args []string
}

// runnerArgs checks that the playbook exists and returns ansible-runner's
// arguments after "run DIR": the paths are absolute, since ansible-runner
// runs in the project directory. Nothing secret goes on the command line:
// extra variables are in the private directory.
func (p Playbook) runnerArgs() ([]string, error) {
	if p.Playbook == "" {
		return nil, &PlaybookError{Reason: "no playbook given", Err: fs.ErrInvalid}
	}
	project, path := p.ProjectDir, p.Playbook
	if project == "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, &PlaybookError{Playbook: p.Playbook, Reason: err.Error(), Err: err}
		}
		project, path = filepath.Dir(abs), filepath.Base(abs)
	}
	project, err := filepath.Abs(project)
	if err != nil {
		return nil, &PlaybookError{Playbook: p.Playbook, Reason: err.Error(), Err: err}
	}
	full := path
	if !filepath.IsAbs(full) {
		full = filepath.Join(project, path)
	}
	switch fi, err := os.Stat(full); {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &PlaybookError{Playbook: p.Playbook, Reason: "not found at " + full, Err: err}
	case err != nil:
		return nil, &PlaybookError{Playbook: p.Playbook, Reason: err.Error(), Err: err}
	case fi.IsDir():
		return nil, &PlaybookError{Playbook: p.Playbook, Reason: full + " is a directory, not a playbook", Err: fs.ErrInvalid}
	}
	args := []string{"--project-dir", project, "--playbook", path}
	if p.Inventory != "" {
		inv, err := filepath.Abs(p.Inventory)
		if err == nil {
			_, err = os.Stat(inv)
		}
		if err != nil {
			return nil, fmt.Errorf("ansible: inventory %q: %w", p.Inventory, err)
		}
		args = append(args, "--inventory", inv)
	}
	if p.Limit != "" {
		args = append(args, "--limit", p.Limit)
	}
	if len(p.Args) > 0 {
		args = append(args, "--cmdline", cmdline.ShellQuote(p.Args))
	}
	return args, nil
}

// Run runs a playbook with ansible-runner and records its events live
// inside a playbook span, a child of the span in ctx (see the package
// documentation). The extra variables and runner's artifacts, which hold
// runner's environment (only what it needs: see Playbook.Env) and the
// gathered facts, are in a private temporary directory (mode 0700),
// removed when Run returns unless WithKeepArtifacts, and by a later Run
// once the process that made it is gone (a driver killed with SIGKILL).
//
// Cancelling ctx, or a vars_prompt that no extra variable answers, stops
// the run: SIGTERM to ansible-runner, which stops ansible-playbook cleanly,
// then after the grace period (adapter.WithGracePeriod) SIGKILL to every process of
// the run; Run returns once they are gone.
//
// The error is nil when the run ended with status 0. Otherwise it is
// ErrNotInstalled, a *PlaybookError (missing or unparseable playbook), a
// *VarsPromptError, an error wrapping ctx's error, or an *ExitError (failed
// or unreachable hosts, among others). The Result holds what was reported
// in every case; every run is reported as common/OperationStarted then
// common/OperationCompleted or common/OperationFailed.
func Run(ctx context.Context, pb Playbook, opts ...Option) (Result, error) {
	cfg := newConfig(opts)
	d := newDecoder(ctx, cfg)
	d.pbName = filepath.Base(pb.Playbook)
	started := time.Now().UTC()
	fail := func(err error, reason string) (Result, error) {
		return d.finish(runEnd{start: started, end: time.Now().UTC(), rc: -1, err: err, reason: reason}), err
	}

	if err := ctx.Err(); err != nil {
		return fail(fmt.Errorf("ansible: run of %s not started: %w", d.pbName, context.Cause(ctx)), "cancelled")
	}
	if !runSupported {
		return fail(errors.New("ansible: Run needs a POSIX system; Stream works everywhere"), "Ansible cannot run on this system")
	}
	args, err := pb.runnerArgs()
	if err != nil {
		var pe *PlaybookError
		if errors.As(err, &pe) && errors.Is(err, fs.ErrNotExist) {
			return fail(err, "playbook "+d.pbName+" not found")
		}
		return fail(err, "playbook "+d.pbName+" cannot be run")
	}
	runner, dir, err := cfg.prepare(pb.ExtraVars)
	if errors.Is(err, ErrNotInstalled) {
		return fail(err, "Ansible is not installed")
	} else if err != nil {
		return fail(err, "the run could not be prepared")
	}
	if !cfg.keep {
		defer os.RemoveAll(dir)
	}

	env := append(runnerEnv(os.Environ()), runSettings...)
	for k, v := range pb.Env {
		env = append(env, k+"="+v)
	}
	argv := append([]string{runner, "run", dir, "--json", "--ident", runIdent}, args...)
	l := d.launch(ctx, launch{Command: procctl.Command{Argv: argv, Env: env}, dir: dir})
	res, runErr := d.conclude(ctx, pb.Playbook, started, l)
	if cfg.keep {
		res.ArtifactDir = dir
	}
	return res, runErr
}

// prepare finds ansible-runner, unless WithRunnerPath names it, and makes
// the run's private directory, with the extra variables.
func (c *config) prepare(vars map[string]any) (runner, dir string, err error) {
	if runner = c.runner; runner == "" {
		if runner, err = exec.LookPath("ansible-runner"); err != nil {
			return "", "", fmt.Errorf("%w: %w", ErrNotInstalled, err)
		}
	}
	cleanStale(c.tempDir)
	if dir, err = os.MkdirTemp(c.tempDir, privateDirName()); err != nil {
		return "", "", fmt.Errorf("ansible: private directory: %w", err)
	}
	if err = writeExtraVars(dir, vars); err != nil {
		_ = os.RemoveAll(dir)
		return "", "", err
	}
	return runner, dir, nil
}

// launch is how one ansible-runner process is started: Argv is runner's
// command line, Stderr (nil: none) and Signals (nil: none) the user's.
type launch struct {
	procctl.Command
	dir      string // the working directory; "": the current one
	playbook bool   // it wraps the user's ansible-playbook, whose groups Signals go to
	// stderr, when set, is ansible-playbook's stderr, a named pipe: its
	// text goes to Stderr as written, without runner's event markers.
	stderr *os.File
	// answersPrompts: ansible-playbook has no terminal to prompt on, so it
	// answers a vars_prompt itself (the default), as without runner.
	answersPrompts bool
}

// launched is how it ended.
type launched struct {
	err       error // it could not be started
	rc        int   // ansible-runner's status as a shell reports it; -1: none
	exit      procctl.Exit
	signalled bool // stopped by ctx or a vars_prompt
	delivered syscall.Signal
	ended     time.Time
	output    string // runner's and Ansible's text outside the events
}

// launch runs ansible-runner once under procctl, feeding its stdout to d
// line by line, and stops it (as Run says) when ctx is done or the
// playbook prompts. Signals from l.Signals go to the user's command.
func (d *decoder) launch(ctx context.Context, l launch) launched {
	cfg := d.cfg
	cmd := exec.Command(l.Argv[0], l.Argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdin = l.dir, l.Env, l.Stdin
	stderr := &tailWriter{max: 64 << 10}
	cmd.Stderr = stderr
	if l.Stderr != nil {
		cmd.Stderr = io.MultiWriter(l.Stderr, stderr)
	}
	// ansible-playbook runs in a session of its own (on a pseudo-terminal):
	// its group, its pid, is known from the events and, on Linux, from the
	// process table while runner is alive.
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
			err = fmt.Errorf("starting %s: %w", l.Argv[0], err)
		}
	}
	if err != nil {
		return launched{err: fmt.Errorf("ansible: %w", err), rc: -1, ended: time.Now().UTC(), exit: procctl.Exit{Code: -1}}
	}
	if l.Started != nil {
		l.Started(cmd.Process.Pid)
	}
	var pipeDone chan struct{}
	pipeTail := &tailWriter{max: 64 << 10}
	var stripped *markerStripper
	if l.stderr != nil {
		pipeDone = make(chan struct{})
		var dst io.Writer = pipeTail
		if l.Stderr != nil {
			dst = io.MultiWriter(l.Stderr, pipeTail)
		}
		stripped = &markerStripper{w: dst}
		go func() {
			defer close(pipeDone)
			_, _ = io.Copy(stripped, l.stderr) // ends at the deadline set once the run has ended
		}()
	}
	if !l.answersPrompts {
		d.onPrompt = child.Stop
	}
	unwatch := context.AfterFunc(ctx, child.Stop)
	unforward := procctl.Forward(child, l.Signals)

	// Cancelling does not stop the reading: the events of a run that is
	// being stopped are still reported, until its output ends.
	readErr := readAll(context.Background(), child.Stdout, d)
	signalled, waitErr := child.Wait()
	if pipeDone != nil {
		// What ansible-playbook wrote is in the pipe: stop the copy, read
		// what is left without waiting (a process it left behind may hold
		// the pipe open), and write what was held back.
		_ = l.stderr.SetReadDeadline(time.Now())
		<-pipeDone
		_ = l.stderr.SetReadDeadline(time.Time{})
		procctl.DrainNow(l.stderr, stripped)
		stripped.flush()
	}
	unforward()
	unwatch()
	procctl.Ended(&l.Command)
	exit := procctl.ExitOf(cmd.ProcessState)
	out := launched{rc: exit.ExitCode(), exit: exit, signalled: signalled, delivered: child.Delivered(),
		ended: time.Now().UTC()}
	if readErr != nil && !errors.Is(readErr, os.ErrDeadlineExceeded) {
		cfg.Logger.Warn("ansible: reading ansible-runner's output", "error", readErr.Error())
	}
	if waitErr != nil && cmd.ProcessState == nil {
		cfg.Logger.Warn("ansible: waiting for ansible-runner", "error", waitErr.Error())
	}
	out.output = strings.TrimSpace(d.output.String() + "\n" + cleanText(string(pipeTail.b), 64<<10) + "\n" + cleanText(string(stderr.b), 64<<10))
	return out
}

// conclude records the end of a run that launch ran and returns its
// Result and error, as Run says.
func (d *decoder) conclude(ctx context.Context, playbook string, started time.Time, l launched) (Result, error) {
	rc := l.rc
	// What went wrong, most specific first.
	o := runEnd{start: started, end: l.ended, rc: rc}
	switch {
	case l.err != nil:
		o.err, o.reason = l.err, "Ansible could not be started"
	case d.varPrompt != "" && !d.statsSeen:
		o.err, o.reason = &VarsPromptError{Var: d.varPrompt}, promptReason(d.varPrompt)
	case l.signalled && ctx.Err() != nil:
		o.err = fmt.Errorf("ansible: run of %s cancelled: %w", d.pbName, context.Cause(ctx))
		o.reason, o.cancelled = "cancelled", true
	case userStop(l.delivered) && !d.statsSeen:
		// The user stopped it (Ctrl-C, SIGINT, SIGTERM, SIGHUP): cancelled,
		// as a cancelled ctx, not failed.
		o.err = fmt.Errorf("ansible: run of %s cancelled by %s", d.pbName, l.delivered)
		o.reason, o.cancelled = "cancelled", true
	case len(d.res.Plays) == 0 && rc != 0 && errorLine(l.output) != "":
		// Ansible stopped before any play: it could not load the playbook
		// (before any event) or resolve it (an error event after the
		// playbook's start, such as an undefined variable in hosts).
		line := errorLine(l.output)
		o.err = &PlaybookError{Playbook: playbook, Reason: line, Output: l.output}
		o.reason = "playbook " + d.pbName + " could not be loaded by Ansible: " + line
	case d.errorStop():
		// Ansible's own error ended the run during a play.
		o.err = &PlaybookError{Playbook: playbook, Reason: d.ansibleErr, Output: l.output}
		o.reason = d.errorStopReason()
	case !d.statsSeen:
		// Runner's status can hide it (0 when the playbook was killed by a
		// signal): a run without Ansible's recap did not finish.
		o.err, o.reason = ErrStatsMissing, "the run ended before Ansible's recap"
		if l.exit.Signal != 0 {
			o.reason = "ansible-playbook killed by signal " + l.exit.Signal.String()
		} else if rc > 0 {
			o.reason = fmt.Sprintf("ansible-playbook ended with status %d before its recap", rc)
		}
	}
	res := d.finish(o)
	switch {
	case o.err != nil && (rc == 0 || !errors.Is(o.err, ErrStatsMissing)):
		return res, o.err
	case rc != 0:
		return res, &ExitError{ExitCode: rc, FailedHosts: res.FailedHosts, UnreachableHosts: res.UnreachableHosts, Output: l.output}
	}
	return res, nil
}

// userStop reports whether sig, delivered to the user's command, is how a
// user stops a run: a terminal's Ctrl-C, SIGINT, SIGTERM or SIGHUP.
func userStop(sig syscall.Signal) bool {
	return sig == syscall.SIGINT || sig == syscall.SIGTERM || sig == syscall.SIGHUP
}

// runSettings ask Ansible to show task arguments (runner then reports
// them, and marks no_log tasks at their start) and not to colour its text.
// exec.Cmd takes a variable's last value: Run puts them before the
// playbook's Env, which wins. RunCommandLine has its own (playbookLaunch).
var runSettings = []string{"ANSIBLE_DISPLAY_ARGS_TO_STDOUT=True", "ANSIBLE_NOCOLOR=True"}

// privatePrefix begins the name of a run's private directory; the owner's
// pid follows (privateDirName), so that a later run can remove the
// directory once its owner is gone (cleanStale).
const privatePrefix = "progressotel-ansible-"

// privateDirName is the os.MkdirTemp pattern of a run's private directory.
func privateDirName() string { return privatePrefix + strconv.Itoa(os.Getpid()) + "-" }

// runnerEnv keeps of the driver's environment what ansible-runner and
// Ansible need to run: ansible-runner writes its whole environment into
// the private directory (artifacts/run/command), so nothing else of the
// driver's (its credentials, tokens) goes there. What the playbook needs
// beyond it (a cloud's credentials for an inventory plugin) the driver
// passes in Playbook.Env.
func runnerEnv(environ []string) []string {
	var env []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if runnerVars[name] || strings.HasPrefix(name, "ANSIBLE_") || strings.HasPrefix(name, "LC_") {
			env = append(env, kv)
		}
	}
	return env
}

// runnerVars are the variables runnerEnv keeps, besides ANSIBLE_* and LC_*:
// where programs are, the user and their home, the locale and zone, the
// temporary directory, Python's own, and the SSH and Kerberos agents that
// Ansible's connections use.
var runnerVars = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true,
	"LANG": true, "LANGUAGE": true, "TZ": true, "TMPDIR": true,
	"PYTHONPATH": true, "PYTHONHOME": true, "PYTHONUSERBASE": true, "VIRTUAL_ENV": true,
	"SSH_AUTH_SOCK": true, "SSH_AGENT_PID": true, "KRB5CCNAME": true,
}

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

// errorLine returns Ansible's error from its output: the first "ERROR!"
// line without it, and where Ansible found the error ("line 3, column 17").
// For invalid YAML (whose ERROR! line says only "We were unable to read
// either as JSON nor YAML"), the YAML parser's own words.
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

// tailWriter keeps the last max bytes written to it. It needs no lock:
// exec.Cmd writes to it on one goroutine, and Wait waits for that to end.
type tailWriter struct {
	max int
	b   []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}
