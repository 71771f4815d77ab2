package otelbridge

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/progress"
)

// TestSetupCIFormat: OTEL_LOGS_EXPORTER=ci is the live view's CI format, given the spans as the
// live view is: on GitHub Actions a group per finished step with its lines, the failed one outside
// any group with an ::error annotation naming its path.
func TestSetupCIFormat(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "true")
	t.Setenv("GITLAB_CI", "")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	t.Setenv("NO_COLOR", "1")
	var out testutil.SyncBuffer
	tel, err := Setup(context.Background(), WithWriter(&out), env(map[string]string{"OTEL_LOGS_EXPORTER": "ci"}))
	if err != nil {
		t.Fatal(err)
	}
	tracer := otel.Tracer("driver")
	ctx, run := tracer.Start(context.Background(), "deploy")
	_ = progress.Record(ctx, progress.OperationStarted("Deploy"))
	sctx, ok := tracer.Start(ctx, "pull the image")
	_ = progress.Record(sctx, progress.Event{Type: "driver/Pulled", Details: map[string]any{"image": "nginx:1.27"}})
	ok.End()
	_, step := tracer.Start(ctx, "boot the VM")
	step.SetStatus(codes.Error, "volume vol-7 is attached elsewhere")
	step.End()
	_ = progress.Record(ctx, progress.OperationFailed("Deploy", "INTERNAL_ERROR", "boot failed"))
	run.End()
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"::group::✓ pull the image  0.0s\n", "INF driver/Pulled  image=nginx:1.27\n::endgroup::\n",
		"\n✗ boot the VM  failed  volume vol-7 is attached elsewhere  ",
		"::error title=Deploy › boot the VM::volume vol-7 is attached elsewhere\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}
