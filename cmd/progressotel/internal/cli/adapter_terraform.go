package cli

import (
	"context"
	"errors"

	"github.com/progressotel/progressotel/internal/kit/cmdline"
	"github.com/progressotel/progressotel/terraform"
)

// terraformAdapter reports OpenTofu and Terraform runs with package
// terraform, through terraform.RunCommandLine, the package's own launcher:
// it adds -json to the command line and records each message of the
// tool's machine-readable UI live, in a span per resource operation.
//
// It changes nothing else about what the tool does: it adds neither
// -auto-approve nor -input=false. An apply or destroy that would prompt for
// approval (no -auto-approve, no saved plan) cannot run with -json, so it
// runs as a plain command, with a warning.
type terraformAdapter struct{}

func (terraformAdapter) Name() string { return "terraform" }

func (terraformAdapter) Match(argv []string) bool { return terraform.Reports(argv) }

func (a terraformAdapter) Run(ctx context.Context, inv *Invocation) Status {
	_, sub, _, _ := cmdline.SplitSubcommand(inv.Argv[1:])
	opts := []terraform.Option{
		terraform.WithRecorder(inv.Recorder), terraform.WithTracerProvider(inv.TracerProvider),
		terraform.WithEnvelope(inv.Envelope), terraform.WithLogger(inv.Logger), terraform.WithDisplay(inv.Stdout),
	}
	if inv.Operation != "" {
		opts = append(opts, terraform.WithOperation(inv.Operation))
	}
	_, exit, err := terraform.RunCommandLine(ctx, inv.command(ctx, false), opts...)
	switch {
	case errors.Is(err, terraform.ErrPrompts):
		inv.Logger.Warn(cmdline.Tool(inv.Argv[0]) + " " + sub + " asks for approval, which -json cannot: its events are not reported (add -auto-approve)")
		return commandAdapter{}.Run(ctx, inv)
	case exit.Code == -1 && exit.Signal == 0:
		inv.Logger.Warn("cannot run the command", "command", cmdline.Tool(inv.Argv[0]), "error", err.Error())
		return startFailure(err)
	}
	return statusOf(exit)
}
