package adapter_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/terraform"
)

// A wrapper runs the command line its user typed, with the options every
// adapter has and the adapter's own in one list, and exits as the tool
// did.
func Example() {
	env := progress.Envelope{Component: progress.Component{Name: "my-driver"}}
	_, exit, err := terraform.RunCommandLine(context.Background(), adapter.Command{
		Argv:   []string{"tofu", "apply", "-auto-approve"},
		Stderr: os.Stderr,
	}, adapter.WithOperation("Install"), adapter.WithEnvelope(env), terraform.WithHeartbeat(time.Minute))
	if err != nil {
		fmt.Fprintln(os.Stderr, "tofu:", err) // the run's failure is in its events too
	}
	os.Exit(exit.ExitCode())
}

// An adapter's own option changes its private configuration; the shared
// ones set Settings, which the adapter reads once all are applied.
func ExampleOwn() {
	type config struct{ dryRun bool }
	withDryRun := func() adapter.Option {
		return adapter.Own(func(c *config) { c.dryRun = true })
	}
	c := &config{}
	s := adapter.Settings{Own: c}
	for _, o := range []adapter.Option{adapter.WithOperation("Install"), withDryRun()} {
		o(&s)
	}
	fmt.Println(s.Operation, c.dryRun)
	// Output: Install true
}
