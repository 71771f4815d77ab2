// Command terraform-driver runs a real OpenTofu apply and destroy of a
// small terraform_data configuration and reports both live, through the
// terraform package, as progress events inside spans: every resource's
// start and end, the provisioners' output, an N-of-M progress bar.
//
//	make demo-terraform                                  # builds bin/tofu on first use
//	go run ./examples/terraform-driver -tofu bin/tofu    # the same
//	OTEL_LOGS_EXPORTER=json go run ./examples/terraform-driver -tofu bin/tofu
//
// The configuration (config/main.tf) has a sensitive variable, whose value
// the driver generates and passes in Command.SensitiveVars, and a sensitive
// output built from it: the value appears nowhere in the output.
package main

import (
	"context"
	"crypto/rand"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/propagation"
	"github.com/progressotel/progressotel/terraform"
)

//go:embed config/main.tf
var config embed.FS

func main() {
	tofu := flag.String("tofu", "bin/tofu", "the tofu (or terraform) executable")
	flag.Parse()
	// A fresh database password per run, passed as a sensitive variable.
	if err := run(context.Background(), *tofu, rand.Text()); err != nil {
		fmt.Fprintln(os.Stderr, "terraform-driver:", err)
		os.Exit(1)
	}
}

// run sets up the event log service and runs the transition; opts are
// added to Setup's (tests send the output to a buffer). It prints a summary
// once everything recorded has been flushed.
func run(ctx context.Context, tofu, dbPassword string, opts ...otelbridge.Option) error {
	opts = append([]otelbridge.Option{otelbridge.WithResource(resource.NewSchemaless(
		attribute.String("service.name", "terraform-driver")))}, opts...)
	tel, err := otelbridge.Setup(ctx, opts...)
	if err != nil {
		return err
	}
	// The request's tracectx, as TNCO sends it in x-tracectx-* headers.
	for k, v := range map[string]string{"transactionid": "5e0c-tf-tx", "tenantid": "tenant-a"} {
		if ctx, err = propagation.WithValue(ctx, k, v); err != nil {
			return err
		}
	}
	summary, err := transition(ctx, tofu, dbPassword, tel.Output())
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if serr := tel.Shutdown(sctx); serr != nil {
		fmt.Fprintln(os.Stderr, "terraform-driver:", serr)
	}
	for _, line := range summary {
		fmt.Fprintln(os.Stderr, "terraform-driver:", line)
	}
	return err
}

// transition is the driver's lifecycle transition: Install (apply), then
// Uninstall (destroy), each a terraform.Run inside the driver's own span.
// The adapter's warnings go to out (the live view's Output on a terminal).
func transition(ctx context.Context, tofu, dbPassword string, out io.Writer) (summary []string, err error) {
	dir, err := os.MkdirTemp("", "terraform-driver-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	main, err := fs.ReadFile(config, "config/main.tf")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), main, 0o644); err != nil {
		return nil, err
	}
	// An empty CLI configuration and no version check: the tool needs no
	// network for terraform_data.
	cliConfig := filepath.Join(dir, "empty.tfrc")
	if err := os.WriteFile(cliConfig, nil, 0o644); err != nil {
		return nil, err
	}

	env := progress.Envelope{
		Component: progress.Component{Name: "terraform-driver", Version: "1.0.0"},
		Resource:  progress.Resource{Type: "resource::webapp::1.0", ID: "webapp-demo"},
		Scope:     map[string]string{"organization": "tenant-a"},
	}
	command := terraform.Command{
		Binary:        tofu,
		Dir:           dir,
		Init:          true,
		SensitiveVars: map[string]any{"db_password": dbPassword},
		Env:           []string{"TF_CLI_CONFIG_FILE=" + cliConfig, "CHECKPOINT_DISABLE=1"},
	}
	tracer := otel.Tracer("github.com/progressotel/progressotel/examples/terraform-driver")
	for _, step := range []struct{ operation, subcommand string }{{"Install", "apply"}, {"Uninstall", "destroy"}} {
		sctx, span := tracer.Start(ctx, step.operation)
		command.Args = []string{step.subcommand}
		res, err := terraform.Run(sctx, command, adapter.WithOperation(step.operation), adapter.WithEnvelope(env),
			adapter.WithLogger(slog.New(slog.NewTextHandler(out, nil))))
		span.End()
		command.Init = false
		if opErr, ok := errors.AsType[*terraform.OperationError](err); ok {
			return summary, fmt.Errorf("%s: %w (stderr: %q)", step.operation, err, opErr.Stderr)
		} else if err != nil {
			return summary, err
		}
		summary = append(summary, fmt.Sprintf("%s: %d of %d resource operations done by %s %s",
			step.operation, res.Completed, res.Total, res.Tool, res.Version))
	}
	return summary, nil
}
