package terraform_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/terraform"
)

// A driver that runs the tool its own way hands its stdout to Stream. Here
// the stream is six lines of a real OpenTofu apply; without the last one,
// the apply's summary, the stream would be reported as cut short.
func ExampleStream() {
	stdout := strings.NewReader(`{"@level":"info","@message":"OpenTofu 1.10.10","@timestamp":"2026-12-01T03:41:00.1Z","tofu":"1.10.10","type":"version","ui":"1.2"}
{"@level":"info","@message":"Plan: 1 to add, 0 to change, 0 to destroy.","@timestamp":"2026-12-01T03:41:00.2Z","changes":{"add":1,"change":0,"import":0,"remove":0,"forget":0,"operation":"plan"},"type":"change_summary"}
{"@level":"info","@message":"terraform_data.web: Creating...","@timestamp":"2026-12-01T03:41:00.3Z","hook":{"resource":{"addr":"terraform_data.web","module":"","resource":"terraform_data.web","implied_provider":"terraform","resource_type":"terraform_data","resource_name":"web","resource_key":null},"action":"create"},"type":"apply_start"}
{"@level":"info","@message":"terraform_data.web: (local-exec): TOKEN=abc123","@timestamp":"2026-12-01T03:41:00.4Z","hook":{"resource":{"addr":"terraform_data.web","resource_type":"terraform_data"},"provisioner":"local-exec","output":"TOKEN=abc123"},"type":"provision_progress"}
{"@level":"info","@message":"terraform_data.web: Creation complete after 1s [id=6c2a]","@timestamp":"2026-12-01T03:41:01.3Z","hook":{"resource":{"addr":"terraform_data.web","resource_type":"terraform_data"},"action":"create","id_key":"id","id_value":"6c2a","elapsed_seconds":1},"type":"apply_complete"}
{"@level":"info","@message":"Apply complete! Resources: 1 added, 0 changed, 0 destroyed.","@timestamp":"2026-12-01T03:41:01.4Z","changes":{"add":1,"change":0,"import":0,"remove":0,"forget":0,"operation":"apply"},"type":"change_summary"}
`)
	// In a driver, otelbridge.Setup installs the SDK and the events go to
	// progress.Default(); a test sink shows them here.
	sink := progresstest.NewSink()
	res, err := terraform.Stream(context.Background(), stdout,
		adapter.WithRecorder(sink.Recorder()), adapter.WithOperation("Install"))
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range sink.Events() {
		switch e.EventName {
		case progress.TypeProgress:
			fmt.Printf("%s %d/%d\n", e.EventName, e.Details["completed"], e.Details["total"])
		case terraform.TypeProvisionOutput:
			fmt.Printf("%s %s\n", e.EventName, e.Details["output"])
		default:
			fmt.Printf("%s %v\n", e.EventName, e.Details["address"])
		}
	}
	fmt.Printf("%s: %d of %d, %s %s\n", res.Operation, res.Completed, res.Total, res.Tool, res.Version)
	// Output:
	// common/OperationStarted <nil>
	// terraform/Version <nil>
	// terraform/ChangeSummary <nil>
	// common/Progress 0/1
	// terraform/ApplyStarted terraform_data.web
	// terraform/ProvisionOutput TOKEN=[REDACTED]
	// terraform/ApplyCompleted terraform_data.web
	// common/Progress 1/1
	// terraform/ChangeSummary <nil>
	// common/OperationCompleted <nil>
	// Install: 1 of 1, tofu 1.10.10
}

// Run runs the tool: it adds -json, -input=false and -auto-approve, passes
// the variables in a private file, and stops the tool gracefully when ctx
// is cancelled.
func ExampleRun() {
	ctx := context.Background() // the driver's request context, with its span
	res, err := terraform.Run(ctx, terraform.Command{
		Dir:           "infra",
		Args:          []string{"apply"},
		Init:          true,
		Vars:          map[string]any{"region": "eu-west-1", "replicas": 3},
		SensitiveVars: map[string]any{"db_password": "from the driver's vault"},
	},
		adapter.WithOperation("Install"),
		adapter.WithEnvelope(progress.Envelope{Resource: progress.Resource{Type: "resource::webapp::1.0", ID: "webapp-1"}}),
	)
	var failed *terraform.OperationError
	switch {
	case errors.As(err, &failed):
		// The diagnostics the tool reported, redacted; the same are in the
		// common/OperationFailed event.
		for _, d := range failed.Diagnostics {
			log.Printf("%s: %s (%s)", d.Severity, d.Summary, d.Address)
		}
	case err != nil:
		log.Fatal(err)
	}
	log.Printf("%d of %d resource operations, outputs %v", res.Completed, res.Total, res.Outputs)
}
