package terraform_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/internal/testkit/redactcorpus"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/terraform"
)

// TestRedactionCorpusThroughStream: the shared corpus through
// terraform.Stream, each text where a tool puts free text: a
// provisioner's output (one message per line, as tofu prints it), a log
// message and an error diagnostic. No secret is in any event, nor in the
// Result or the error the driver gets.
func TestRedactionCorpusThroughStream(t *testing.T) {
	var b strings.Builder
	line := func(m map[string]any) {
		m["@level"], m["@timestamp"] = "info", "2026-12-01T03:41:00.3Z"
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(out)
		b.WriteByte('\n')
	}
	res := map[string]any{"addr": "terraform_data.web", "resource_type": "terraform_data"}
	line(map[string]any{"type": "version", "@message": "OpenTofu 1.10.10", "tofu": "1.10.10", "ui": "1.2"})
	line(map[string]any{"type": "apply_start", "@message": "terraform_data.web: Creating...",
		"hook": map[string]any{"resource": res, "action": "create"}})
	line(map[string]any{"type": "provision_start", "@message": "Provisioning with 'local-exec'...",
		"hook": map[string]any{"resource": res, "provisioner": "local-exec"}})
	for _, c := range redactcorpus.Cases {
		for _, l := range strings.Split(c.Text, "\n") {
			line(map[string]any{"type": "provision_progress", "@message": "terraform_data.web: (local-exec): " + l,
				"hook": map[string]any{"resource": res, "provisioner": "local-exec", "output": l}})
		}
		line(map[string]any{"type": "log", "@message": c.Text})
	}
	line(map[string]any{"type": "provision_complete", "@message": "(local-exec) Provisioning complete",
		"hook": map[string]any{"resource": res, "provisioner": "local-exec"}})
	for _, c := range redactcorpus.Cases {
		line(map[string]any{"type": "diagnostic", "@level": "error", "@message": "Error: " + c.Name,
			"diagnostic": map[string]any{"severity": "error", "summary": "failed: " + c.Text, "detail": c.Text}})
	}

	sink := progresstest.NewSink()
	result, err := terraform.Stream(context.Background(), strings.NewReader(b.String()), adapter.WithRecorder(sink.Recorder()))
	var out strings.Builder
	for _, r := range sink.Records() {
		r.WalkAttributes(func(kv attribute.KeyValue) bool {
			out.WriteString(string(kv.Key) + "=" + kv.Value.String() + "\n")
			return true
		})
	}
	if got := len(sink.OfType(terraform.TypeProvisionOutput)); got < len(redactcorpus.Cases) {
		t.Fatalf("%d provisioner output events, want one per line of the corpus", got)
	}
	if leaks := redactcorpus.Leaks(out.String()); len(leaks) > 0 {
		t.Errorf("events leaked %v", leaks)
	}
	if leaks := redactcorpus.Leaks(fmt.Sprintf("%+v %v", result, err)); len(leaks) > 0 {
		t.Errorf("the Result or the error leaked %v", leaks)
	}
}
