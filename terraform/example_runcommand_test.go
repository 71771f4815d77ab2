package terraform_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/terraform"
)

// A wrapper runs the command line its user typed, with -json added,
// shows the tool's text and ends with the tool's status.
func ExampleRunCommandLine() {
	_, exit, err := terraform.RunCommandLine(context.Background(), adapter.Command{
		Argv:   []string{"tofu", "-chdir=infra", "apply", "-auto-approve"},
		Stderr: os.Stderr,
	}, terraform.WithDisplay(os.Stdout))
	if errors.Is(err, terraform.ErrPrompts) {
		fmt.Fprintln(os.Stderr, "add -auto-approve: -json cannot ask for approval")
	}
	os.Exit(exit.ExitCode())
}
