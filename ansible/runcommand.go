package ansible

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/internal/base/term"
	"github.com/progressotel/progressotel/internal/kit/cmdline"
)

// WithDisplay writes what Ansible would have printed to w while the run is
// reported. For ansible-playbook, w gets its stdout byte for byte as the
// bare command writes it (colours when w is a terminal, every blank line,
// no task argument the bare run does not print), and its stderr goes to the
// command line's Stderr, as written (see DESIGN.md, "The bare command's
// output under RunCommandLine"). For ansible-runner run, w gets the display
// text of each job event, cleaned of terminal escapes, or the event lines as
// they are when the command line asks for --json itself. RunCommandLine
// only.
func WithDisplay(w io.Writer) Option {
	return adapter.Own(func(c *config) { c.Display = w })
}

// RunCommandLine runs an Ansible command line as a user typed it and
// records its events live as Run does: for ansible-playbook ARGS,
// ansible-runner in a private directory (mode 0700, removed afterwards)
// whose args file is that command line, in the current directory; for
// ansible-runner run ..., that command with --json added.
//
// Signals from c.Signals go to ansible-playbook as if sent to it directly
// (not to ansible-runner, which would turn them into its "canceled" status
// 254), so that SIGINT makes it exit 99 as in a terminal. Cancelling ctx
// stops the run as Run does.
//
// Exit is how the user's command ended: ansible-playbook's status, or, when
// it was killed by a signal (ansible-runner then exits 0 with its status
// "failed" and no rc), the signal delivered to it, else SIGKILL; -1 when
// nothing ran. The error is ErrNotInstalled, before anything is recorded,
// when ansible-runner is not found (the caller may run the command
// plainly); otherwise as for Run.
func RunCommandLine(ctx context.Context, c adapter.Command, opts ...Option) (Result, adapter.Exit, error) {
	if len(c.Argv) == 0 {
		return Result{}, adapter.Exit{Code: -1}, errors.New("ansible: RunCommandLine: no command line")
	}
	cfg := newConfig(opts)
	l := launch{Command: c}
	var privateDir string
	var display *exactDisplay
	switch cmdline.Tool(c.Argv[0]) {
	case "ansible-runner":
		if slices.Contains(c.Argv[1:], "--json") || slices.Contains(c.Argv[1:], "-j") {
			cfg.RawTee, cfg.Display = cfg.Display, nil // the user asked for the JSON itself
		} else {
			l.Argv = append(slices.Clone(c.Argv), "--json")
		}
	default: // ansible-playbook
		runner, dir, err := cfg.prepare(nil)
		if err != nil {
			return Result{}, adapter.Exit{Code: -1}, err
		}
		// The private directory holds runner's artifacts, which hold the
		// whole environment and the gathered facts.
		defer os.RemoveAll(dir)
		cwd, err := os.Getwd()
		if err != nil {
			return Result{}, adapter.Exit{Code: -1}, fmt.Errorf("ansible: %w", err)
		}
		if l.Env == nil {
			l.Env = os.Environ()
		}
		l.playbook, privateDir = true, dir
		argv, env, disp, err := playbookLaunch(&l, dir, cfg.Display)
		if err != nil {
			return Result{}, adapter.Exit{Code: -1}, err
		}
		if l.stderr != nil {
			defer l.stderr.Close()
		}
		display = disp
		if cfg.Display != nil {
			cfg.RawTee = &plainLines{w: cfg.Display}
		}
		if err := os.WriteFile(filepath.Join(dir, "args"), []byte(cmdline.ShellQuote(argv)), 0o600); err != nil {
			return Result{}, adapter.Exit{Code: -1}, fmt.Errorf("ansible: private directory: %w", err)
		}
		// -p is required by runner's command line and unused: the args
		// file says what runs.
		l.Argv = []string{runner, "run", dir, "--json", "--ident", runIdent, "--project-dir", cwd, "-p", "(args)"}
		l.Env = env
	}

	d := newDecoder(ctx, cfg)
	d.display = display
	d.pbName = playbookName(c.Argv)
	started := time.Now().UTC()
	out := d.launch(ctx, l)
	if privateDir != "" && out.err == nil && out.exit == (adapter.Exit{}) && runnerSaysKilled(privateDir) {
		// ansible-playbook died by a signal: runner says "failed" with no
		// rc and exits 0.
		out.exit = adapter.Exit{Signal: cmp.Or(out.delivered, syscall.SIGKILL)}
	}
	res, err := d.conclude(ctx, "", started, out)
	var prompt *VarsPromptError
	if errors.As(err, &prompt) && privateDir != "" {
		// What ansible-playbook does when it cannot read the answer.
		out.exit = adapter.Exit{Code: ExitPromptUnanswered}
	}
	if out.exit.Signal != 0 && err == nil {
		err = &ExitError{ExitCode: out.exit.ExitCode(), FailedHosts: res.FailedHosts, UnreachableHosts: res.UnreachableHosts, Output: out.output}
	}
	return res, out.exit, err
}

// runnerSaysKilled reports whether ansible-runner's artifacts say that the
// playbook ended without an exit status: killed by a signal.
func runnerSaysKilled(dir string) bool {
	art := filepath.Join(dir, "artifacts", runIdent)
	status, err1 := os.ReadFile(filepath.Join(art, "status"))
	rc, err2 := os.ReadFile(filepath.Join(art, "rc"))
	return err1 == nil && err2 == nil && strings.TrimSpace(string(status)) == "failed" && strings.TrimSpace(string(rc)) == "None"
}

// playbookName is the file name of the first playbook on an
// ansible-playbook command line, "" when none is found.
func playbookName(argv []string) string {
	for _, a := range argv[1:] {
		if strings.HasSuffix(a, ".yml") || strings.HasSuffix(a, ".yaml") {
			return filepath.Base(a)
		}
	}
	return ""
}

// ExitPromptUnanswered is RunCommandLine's status for an ansible-playbook
// stopped at a vars_prompt on a terminal, which ansible-runner keeps from
// the user: ansible-playbook's own status when its prompt gets no answer
// (an end of input: "Unexpected Exception", 250), not runner's 254.
const ExitPromptUnanswered = 250

// playbookLaunch sets up the user's ansible-playbook command line to run
// under ansible-runner as it runs alone, and returns it, with runner's
// environment and the display of its stdout:
//
//   - its stderr is a named pipe in dir that launch copies to Stderr, since
//     runner's terminal would mix it into stdout;
//   - its stdin is runner's terminal only when the user's is a terminal;
//     otherwise /dev/null, so that it does not prompt, as alone;
//   - runner's terminal is as wide as the display's, when that is one, and
//     Ansible colours its text only when the display is a terminal (or the
//     user forces it);
//   - ANSIBLE_DISPLAY_ARGS_TO_STDOUT is set, unless the user set it or
//     banners are drawn by cowsay, and the arguments it adds to the task
//     banners are taken out of the display again.
func playbookLaunch(l *launch, dir string, display io.Writer) (argv, env []string, disp *exactDisplay, err error) {
	env = slices.Clone(l.Env)
	disp = &exactDisplay{w: display, columns: displayColumns(0)}
	if _, set := lookupEnv(env, "ANSIBLE_DISPLAY_ARGS_TO_STDOUT"); !set && !cowsayBanners(env) {
		env = append([]string{"ANSIBLE_DISPLAY_ARGS_TO_STDOUT=True"}, env...)
		disp.stripArgs = true
	}
	cols := 0
	if term.IsTerminal(display) {
		if w, _, ok := term.Size(display); ok {
			cols = w
			disp.columns = displayColumns(w)
		}
	} else {
		// Ansible's ANSIBLE_FORCE_COLOR still wins, as alone.
		env = append(env, "ANSIBLE_NOCOLOR=True")
	}
	interactive := false
	if f, ok := l.Stdin.(*os.File); ok && term.IsTerminal(f) {
		interactive, l.Stdin = true, nil // runner does not read it
	}
	l.answersPrompts = !interactive
	// runner's pexpect sets its terminal to 80 columns from the parent
	// too, once the exec of this script has happened: so the width is set,
	// and set again until it has held for 10 checks 10 ms apart (2 s at
	// most), before Ansible reads it at its start.
	script := `f=$1 c=$2; shift 2; n=0 t=0; while [ "$c" != 0 ] && [ $n -lt 10 ] && [ $t -lt 200 ]; do ` +
		`case $(stty size 2>/dev/null) in *" $c") n=$((n+1)) ;; *) stty cols "$c" 2>/dev/null || break; n=0 ;; esac; ` +
		`t=$((t+1)); sleep 0.01; done; exec "$@" 2>"$f"`
	if !interactive {
		script += " </dev/null"
	}
	pipe := filepath.Join(dir, "stderr")
	if l.stderr, err = openStderrPipe(pipe); err != nil {
		return nil, nil, nil, fmt.Errorf("ansible: private directory: %w", err)
	}
	argv = append([]string{"/bin/sh", "-c", script, "sh", pipe, strconv.Itoa(cols)}, l.Argv...)
	return argv, env, disp, nil
}
