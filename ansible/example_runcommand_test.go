package ansible_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/ansible"
)

// A wrapper runs the command line its user typed, shows what Ansible
// prints, passes its signals on and ends as ansible-playbook would have.
func ExampleRunCommandLine() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	_, exit, err := ansible.RunCommandLine(context.Background(), adapter.Command{
		Argv:    []string{"ansible-playbook", "-i", "inventory", "site.yml"},
		Stderr:  os.Stderr,
		Signals: sigs,
	}, ansible.WithDisplay(os.Stdout), adapter.WithOperation("Install"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(exit.ExitCode())
}
