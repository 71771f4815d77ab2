package ansible_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/ansible"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
)

// A driver runs its lifecycle playbook; every event is recorded live
// through progress.Default() (installed by otelbridge.Setup), inside spans
// under the span in ctx.
func ExampleRun() {
	ctx := context.Background()
	res, err := ansible.Run(ctx, ansible.Playbook{
		ProjectDir: "/srv/driver/scripts",
		Playbook:   "Install.yaml",
		Inventory:  "/srv/driver/inventory/hosts",
		ExtraVars:  map[string]any{"release": "1.2.3"},
	},
		adapter.WithOperation("Install"),
		adapter.WithEnvelope(progress.Envelope{
			Component: progress.Component{Name: "ansible-lifecycle-driver", Version: "3.4.0"},
			Resource:  progress.Resource{Type: "resource::nginx::1.0", ID: "nginx-1"},
		}))
	var (
		exit   *ansible.ExitError
		prompt *ansible.VarsPromptError
	)
	switch {
	case errors.As(err, &exit):
		fmt.Println("failed:", exit.FailedHosts, "unreachable:", exit.UnreachableHosts)
	case errors.As(err, &prompt):
		fmt.Println("the playbook needs", prompt.Var)
	case err != nil:
		fmt.Println(err)
	default:
		fmt.Println("ok:", res.Stats)
	}
}

// A driver that runs Ansible its own way (AWX, its own runner) decodes the
// job-event stream. Here: a real run of a failing playbook, recorded.
func ExampleStream() {
	f, err := os.Open("testdata/streams/fail.jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()

	sink := progresstest.NewSink() // in a driver: otelbridge.Setup
	res, err := ansible.Stream(context.Background(), f,
		adapter.WithRecorder(sink.Recorder()), adapter.WithOperation("Upgrade"))
	fmt.Println("error:", err)
	fmt.Println("failed hosts:", res.FailedHosts)
	for _, e := range sink.Events() {
		switch e.EventName {
		case ansible.TypeTaskFailedOnHost:
			fmt.Println(e.EventName, e.Details["hostName"], e.Details["taskResult"].(map[string]any)["rc"])
		case progress.TypeOperationFailed:
			fmt.Println(e.EventName, e.Details["failureCode"], e.Details["description"])
		default:
			fmt.Println(e.EventName)
		}
	}
	// Output:
	// error: <nil>
	// failed hosts: [web-1 web-2]
	// common/OperationStarted
	// ansible/PlayStarted
	// ansible/TaskStarted
	// ansible/TaskStartedOnHost
	// ansible/TaskStartedOnHost
	// ansible/TaskCompletedOnHost
	// ansible/TaskCompletedOnHost
	// ansible/TaskStarted
	// ansible/TaskStartedOnHost
	// ansible/TaskStartedOnHost
	// ansible/TaskFailedOnHost web-2 3
	// ansible/TaskFailedOnHost web-1 3
	// ansible/PlaybookResult
	// common/OperationFailed INFRASTRUCTURE_ERROR failed hosts: web-1, web-2
}
