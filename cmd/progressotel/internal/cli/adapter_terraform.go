package cli

import (
	"context"
	"errors"

	"github.com/progressotel/progressotel/internal/kit/cmdline"
	"github.com/progressotel/progressotel/terraform"
)

// terraformAdapter reports OpenTofu and Terraform runs with package
// terraform, through terraform.RunCommandLine: it adds -json (and neither
// -auto-approve nor -input=false) and records each message of the tool's
// machine-readable UI live, in a span per resource operation. An apply or
// destroy that would prompt for approval cannot run with -json: it runs as
// a plain command, with a warning.
type terraformAdapter struct{}

func (terraformAdapter) Name() string { return "terraform" }

func (terraformAdapter) Match(argv []string) bool { return terraform.Reports(argv) }

func (a terraformAdapter) Run(ctx context.Context, inv *Invocation) Status {
	_, sub, _, _ := cmdline.SplitSubcommand(inv.Argv[1:])
	_, exit, err := terraform.RunCommandLine(ctx, inv.command(ctx, false), terraform.WithRecorder(inv.Recorder),
		terraform.WithTracerProvider(inv.TracerProvider), terraform.WithEnvelope(inv.Envelope),
		terraform.WithLogger(inv.Logger), terraform.WithDisplay(inv.Stdout), terraform.WithOperation(inv.Operation))
	if errors.Is(err, terraform.ErrPrompts) {
		inv.Logger.Warn(cmdline.Tool(inv.Argv[0]) + " " + sub + " asks for approval, which -json cannot: its events are not reported (add -auto-approve)")
		return commandAdapter{}.Run(ctx, inv)
	}
	return launched(inv, exit, err)
}
