package terraform

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	outcomes "github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/internal/kit/adapter"
	"github.com/progressotel/progressotel/progress/progresstest"
)

func TestWithoutKeys(t *testing.T) {
	for in, want := range map[string]string{
		"null_resource.a":                       "null_resource.a",
		"null_resource.a[0]":                    "null_resource.a",
		`module.m["x"].aws_instance.web["a]b"]`: "module.m.aws_instance.web",
		`module.m["q\"]"].null_resource.b[12]`:  "module.m.null_resource.b",
		"data.local_file.f":                     "data.local_file.f",
	} {
		if got := withoutKeys(in); got != want {
			t.Errorf("withoutKeys(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestStoppedRunConforms: under the CI/CD conventions the recorded apply
// that the tool's interrupt stopped (one resource done, two cut short) is
// a run with the result cancellation, whose cut operations are tasks with
// that result and error.type, and whose completed one succeeded.
func TestStoppedRunConforms(t *testing.T) {
	t.Setenv(adapter.SemconvEnv, "cicd/dup")
	in, err := os.ReadFile("testdata/streams/tofu-apply-cancelled.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	c := newCapture(t)
	if _, err := Stream(context.Background(), bytes.NewReader(in), c.opts()...); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("Stream: %v, want ErrInterrupted", err)
	}
	progresstest.CheckCICDSpans(t, c.spans.Ended())
	run := only(t, c.spansNamed("RUN terraform"))
	if attr(run, "cicd.pipeline.result") != "cancellation" || attr(run, outcomes.Key) != outcomes.Cancelled {
		t.Errorf("run: result %q outcome %q", attr(run, "cicd.pipeline.result"), attr(run, outcomes.Key))
	}
	for name, want := range map[string]string{
		"create terraform_data.polite": "cancellation", "create terraform_data.stubborn": "cancellation",
		"create terraform_data.quick": "success",
	} {
		s := only(t, c.spansNamed(name))
		errType := "" // a cancelled task was stopped: no error.type
		if attr(s, "cicd.pipeline.task.run.result") != want || attr(s, "error.type") != errType {
			t.Errorf("%s: result %q error.type %q, want %s", name, attr(s, "cicd.pipeline.task.run.result"), attr(s, "error.type"), want)
		}
	}
}
