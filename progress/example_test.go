package progress_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
)

// A driver records an event inside its traced operation. Here the records go
// to a progresstest.Sink; in a driver, otelbridge.Setup installs the
// exporters and progress.Record uses them.
func ExampleRecorder_Record() {
	sink := progresstest.NewSink()
	rec := sink.Recorder()

	err := rec.Record(context.Background(), progress.Event{
		Type: "ansible/TaskStarted",
		Details: map[string]any{
			"taskName": "install nginx",
			"args":     map[string]any{"name": "nginx", "password": "hunter2"},
		},
	})
	if err != nil {
		fmt.Println(err)
	}
	for _, ev := range sink.Events() {
		fmt.Println(ev.EventName, ev.Details)
	}
	// Output: ansible/TaskStarted map[args:map[name:nginx password:[REDACTED]] taskName:install nginx]
}

// Details can be a struct: it is encoded by its json tags, as encoding/json
// would encode it.
func ExampleRecorder_Record_struct() {
	type taskOnHost struct {
		TaskName string `json:"taskName"`
		HostName string `json:"hostName"`
		Delegate string `json:"delegatedHostName,omitempty"`
	}
	sink := progresstest.NewSink()
	_ = sink.Recorder().Record(context.Background(), progress.Event{
		Type:    "ansible/TaskStartedOnHost",
		Details: taskOnHost{TaskName: "install nginx", HostName: "web-1"},
	})
	fmt.Println(sink.Events()[0].Message())
	// Output: map[details:map[hostName:web-1 taskName:install nginx] eventType:ResourceTransitionProgressEvent progressEventType:ansible/TaskStartedOnHost]
}

// An invalid progressEventType is a *ValidationError that names the value
// and the rule; the event is not emitted and is counted.
func ExampleValidationError() {
	rec := progresstest.NewSink().Recorder()
	err := rec.Record(context.Background(), progress.Event{Type: "ansible.TaskStarted"})
	var ve *progress.ValidationError
	fmt.Println(errors.Is(err, progress.ErrInvalidEvent), errors.As(err, &ve), ve.Field)
	fmt.Println(err)
	fmt.Println(rec.Stats().Invalid)
	// Output:
	// true true type
	// progress: invalid progressEventType "ansible.TaskStarted": missing '/' between group and name (want "<group>/<name>": group [a-z][a-z0-9_-]*, name [A-Za-z][A-Za-z0-9_.-]*, at most 128 bytes)
	// 1
}

// The common catalogue lets TNCO draw a progress bar for any driver.
func ExampleProgress() {
	sink := progresstest.NewSink()
	rec := sink.Recorder()
	for i := int64(1); i <= 3; i++ {
		_ = rec.Record(context.Background(), progress.Progress(i, 3, "tasks"))
	}
	for _, ev := range sink.OfType(progress.TypeProgress) {
		fmt.Printf("%d/%d %s (sequence %d)\n", ev.Details["completed"], ev.Details["total"], ev.Details["unit"], ev.Sequence)
	}
	// Output:
	// 1/3 tasks (sequence 1)
	// 2/3 tasks (sequence 2)
	// 3/3 tasks (sequence 3)
}
