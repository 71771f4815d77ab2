package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/progressotel/progressotel/ansible"
	"github.com/progressotel/progressotel/internal/kit/cmdline"
)

// ansibleAdapter reports Ansible runs with package ansible, from
// ansible-runner's job events (`ansible-runner run --json`), the AWX event
// stream: each event is recorded live by ansible.Stream, in the playbook →
// play → task → host spans under the run's span.
//
//   - ansible-runner run ...: runs as given, with --json added.
//   - ansible-playbook ARGS: runs exactly that command line, under
//     ansible-runner (the `args` file of a private data directory, with the
//     current directory as the project directory, so relative paths mean
//     what they meant), since only runner turns a playbook run into job
//     events. Without ansible-runner it runs as a plain command, with a
//     warning.
//
// stdout shows each event's display text, what Ansible would have printed
// (the JSON itself when --json was given to ansible-runner). A vars_prompt,
// which nobody can answer under runner, stops the run (SIGTERM to runner),
// as ansible.Run does.
type ansibleAdapter struct{}

func (ansibleAdapter) Name() string { return "ansible" }

func (ansibleAdapter) Match(argv []string) bool {
	switch toolName(argv[0]) {
	case "ansible-playbook":
		// Help and version print and exit: nothing to report.
		return !slices.ContainsFunc(argv[1:], func(a string) bool { return a == "-h" || a == "--help" || a == "--version" })
	case "ansible-runner":
		i := slices.IndexFunc(argv[1:], func(a string) bool { return !strings.HasPrefix(a, "-") })
		return i >= 0 && argv[1+i] == "run"
	}
	return false
}

// runnerIdent is the ident of a run of ansible-playbook under runner: the
// private data directory is the run's own, so a fixed name is unique.
const runnerIdent = "run"

func (a ansibleAdapter) Run(ctx context.Context, inv *Invocation) Status {
	var argv []string
	raw := false
	env := slices.Clone(inv.Env)
	switch toolName(inv.Argv[0]) {
	case "ansible-runner":
		argv = slices.Clone(inv.Argv)
		raw = slices.Contains(argv, "--json") || slices.Contains(argv, "-j")
		if !raw {
			argv = append(argv, "--json")
		}
	default: // ansible-playbook
		runner, err := exec.LookPath("ansible-runner")
		if err != nil {
			inv.Logger.Warn("ansible-runner is not installed: ansible-playbook runs as a plain command, without Ansible's events (Debian: apt-get install python3-ansible-runner)")
			return commandAdapter{}.Run(ctx, inv)
		}
		dir, err := runnerDir(inv.Argv)
		if err != nil {
			inv.Logger.Warn("ansible-playbook runs as a plain command, without Ansible's events", "error", err.Error())
			return commandAdapter{}.Run(ctx, inv)
		}
		// The private data directory holds runner's artifacts, which
		// hold the whole environment and the gathered facts.
		defer os.RemoveAll(dir)
		cwd, err := os.Getwd()
		if err != nil {
			inv.Logger.Warn("ansible-playbook runs as a plain command, without Ansible's events", "error", err.Error())
			return commandAdapter{}.Run(ctx, inv)
		}
		// -p is required by runner's command line and unused: the args
		// file says what runs.
		argv = []string{runner, "run", dir, "--json", "--ident", runnerIdent, "--project-dir", cwd, "-p", "(args)"}
		// Runner reports task arguments, and marks no_log tasks at their
		// start, only when Ansible shows them (see package ansible).
		env = setDefaultEnv(env, "ANSIBLE_DISPLAY_ARGS_TO_STDOUT", "True")
	}

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stderr = inv.Stdin, inv.Stderr
	var opts []ansible.Option
	opts = append(opts, ansible.WithRecorder(inv.Recorder), ansible.WithTracerProvider(inv.TracerProvider),
		ansible.WithEnvelope(inv.Envelope), ansible.WithLogger(inv.Logger))
	if inv.Operation != "" {
		opts = append(opts, ansible.WithOperation(inv.Operation))
	}
	var stopOnce sync.Once
	tap := func(line []byte) {
		var e struct {
			Event     string `json:"event"`
			Stdout    string `json:"stdout"`
			EventData struct {
				VarName string `json:"varname"`
			} `json:"event_data"`
		}
		if json.Unmarshal(line, &e) != nil {
			_, _ = inv.Stdout.Write(line) // runner's own text, such as a start-up error
			return
		}
		if raw {
			_, _ = inv.Stdout.Write(line)
		} else if e.Stdout != "" {
			_, _ = io.WriteString(inv.Stdout, strings.ReplaceAll(e.Stdout, "\r\n", "\n")+"\n")
		}
		if e.Event == "playbook_on_vars_prompt" {
			stopOnce.Do(func() {
				inv.Logger.Warn("the playbook prompts for a variable, which a run cannot answer: stopping it (give the variable with -e)", "var", e.EventData.VarName)
				_ = cmd.Process.Signal(syscall.SIGTERM)
			})
		}
	}
	run := &streamedRun{
		inv: inv, cmd: cmd, tap: tap, maxLine: ansible.DefaultMaxLineBytes,
		decode: func(ctx context.Context, r io.Reader) {
			// It records the outcome, even of a stream without a single
			// job event (with Ansible's error); the status is runner's.
			_, _ = ansible.Stream(ctx, r, opts...)
		},
	}
	st, err := run.run(ctx)
	if err != nil {
		inv.Logger.Warn("cannot run the command", "command", toolName(argv[0]), "error", err.Error())
	}
	return st
}

// runnerDir creates ansible-runner's private data directory (0700) with
// the args file that makes runner run argv as it is.
func runnerDir(argv []string) (string, error) {
	dir, err := os.MkdirTemp("", "progressotel-ansible-")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "args"), []byte(cmdline.ShellQuote(argv)), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// setDefaultEnv sets name=value in env unless env already sets name.
func setDefaultEnv(env []string, name, value string) []string {
	for _, kv := range env {
		if strings.HasPrefix(kv, name+"=") {
			return env
		}
	}
	return append(env, name+"="+value)
}
