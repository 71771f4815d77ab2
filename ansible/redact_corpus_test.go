package ansible_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/ansible"
	"github.com/progressotel/progressotel/internal/testkit/redactcorpus"
	"github.com/progressotel/progressotel/progress/progresstest"
)

// withText rewrites a recorded ansible-runner stream (a real run's
// events) so that text sits where Ansible puts free text: the task's
// arguments (task_args' _raw_params, the module's invocation), the
// result's msg, stdout and stdout_lines, and the display text.
func withText(t *testing.T, recorded []byte, text string) []byte {
	t.Helper()
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(recorded))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		if data, ok := ev["event_data"].(map[string]any); ok {
			if _, ok := data["task_args"]; ok {
				data["task_args"] = "_raw_params=" + text
			}
			if res, ok := data["res"].(map[string]any); ok {
				res["msg"], res["stdout"], res["stderr"] = text, text, text
				res["stdout_lines"] = strings.Split(text, "\n")
				res["cmd"] = []any{"sh", "-c", text}
				res["invocation"] = map[string]any{"module_args": map[string]any{"_raw_params": text}}
				ev["stdout"] = "changed: [web-1] => " + text
			}
		}
		line, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(line)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// TestRedactionCorpusThroughStream: the shared corpus through
// ansible.Stream, in a recorded run's events (TaskStarted,
// TaskStartedOnHost, TaskCompletedOnHost): no secret is in any event,
// nor in the Result.
func TestRedactionCorpusThroughStream(t *testing.T) {
	recorded, err := os.ReadFile("testdata/streams/delegate.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range redactcorpus.Cases {
		t.Run(c.Name, func(t *testing.T) {
			sink := progresstest.NewSink()
			res, err := ansible.Stream(context.Background(), bytes.NewReader(withText(t, recorded, c.Text)),
				adapter.WithRecorder(sink.Recorder()))
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			for _, r := range sink.Records() {
				r.WalkAttributes(func(kv attribute.KeyValue) bool {
					out.WriteString(string(kv.Key) + "=" + kv.Value.String() + "\n")
					return true
				})
			}
			if !strings.Contains(out.String(), "_raw_params") || len(sink.OfType(ansible.TypeTaskCompletedOnHost)) == 0 {
				t.Fatalf("the text is not in the events:\n%s", out.String())
			}
			if leaks := redactcorpus.Leaks(out.String()); len(leaks) > 0 {
				t.Errorf("events leaked %v:\n%s", leaks, out.String())
			}
			if leaks := redactcorpus.Leaks(fmt.Sprintf("%+v", res)); len(leaks) > 0 {
				t.Errorf("the Result leaked %v", leaks)
			}
		})
	}
}
