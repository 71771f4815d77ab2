package cli

import (
	"context"
	"errors"

	"github.com/progressotel/progressotel/ansible"
)

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
