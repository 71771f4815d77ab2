package cli

import (
	"context"
	"errors"

	"github.com/progressotel/progressotel/ansible"
	"github.com/progressotel/progressotel/internal/kit/cmdline"
)

// ansibleAdapter reports Ansible runs with package ansible, from
// ansible-runner's job events (the AWX event stream): each event is
// recorded live, in the playbook → play → task → host spans under the
// run's span, as for ansible.Run.
//
// The command line runs through ansible.RunCommandLine, the package's own
// launcher (ansible-runner's private directory, the vars_prompt stop, one
// read of the stream); without ansible-runner it runs as a plain command,
// with a warning. stdout shows what Ansible would have printed.
type ansibleAdapter struct{}

func (ansibleAdapter) Name() string { return "ansible" }

func (ansibleAdapter) Match(argv []string) bool { return ansible.Reports(argv) }

func (a ansibleAdapter) Run(ctx context.Context, inv *Invocation) Status {
	opts := []ansible.Option{ansible.WithRecorder(inv.Recorder), ansible.WithTracerProvider(inv.TracerProvider),
		ansible.WithEnvelope(inv.Envelope), ansible.WithLogger(inv.Logger), ansible.WithDisplay(inv.Stdout)}
	if inv.Operation != "" {
		opts = append(opts, ansible.WithOperation(inv.Operation))
	}
	_, exit, err := ansible.RunCommandLine(ctx, inv.command(ctx, false), opts...)
	if errors.Is(err, ansible.ErrNotInstalled) {
		inv.Logger.Warn("ansible-runner is not installed: ansible-playbook runs as a plain command, without Ansible's events (Debian: apt-get install python3-ansible-runner)")
		return commandAdapter{}.Run(ctx, inv)
	}
	var prompt *ansible.VarsPromptError
	if errors.As(err, &prompt) {
		inv.Logger.Warn("the playbook prompts for a variable, which a run cannot answer: it was stopped (give the variable with -e)", "var", prompt.Var)
	}
	if exit.Code == -1 && exit.Signal == 0 {
		// Nothing ran; the package has reported the operation as failed.
		inv.Logger.Warn("cannot run the command", "command", cmdline.Tool(inv.Argv[0]), "error", err.Error())
		return startFailure(err)
	}
	return statusOf(exit)
}
