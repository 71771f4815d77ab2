package progress_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/log/noop"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/progress"
)

// TestRecordWithoutProviderWarnsOnce: recording before any LoggerProvider
// is installed returns nil and says so once, on stderr through the OTel
// error handler, however many records are lost and through whichever
// Recorder of the global provider. An explicit no-op provider and an
// installed one stay quiet. Each case runs in a child process: the
// warning is once per process, and the global provider is process state.
func TestRecordWithoutProviderWarnsOnce(t *testing.T) {
	if mode := os.Getenv("PROGRESS_NOPROVIDER_CHILD"); mode != "" {
		noProviderChild(t, mode)
		return
	}
	for mode, want := range map[string]int{"unset": 1, "noop": 0, "installed": 0} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRecordWithoutProviderWarnsOnce$", "-test.count=1")
		cmd.Env = append(os.Environ(), "PROGRESS_NOPROVIDER_CHILD="+mode)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", mode, err, out)
		}
		if got := strings.Count(string(out), progress.ErrNoLoggerProvider.Error()); got != want {
			t.Errorf("%s: the warning printed %d times, want %d:\n%s", mode, got, want, out)
		}
	}
}

func noProviderChild(t *testing.T, mode string) {
	ctx := context.Background()
	var rec *progress.Recorder
	switch mode {
	case "noop":
		rec = progress.NewRecorder(progress.WithLoggerProvider(noop.NewLoggerProvider()))
	case "installed":
		lp := sdklog.NewLoggerProvider()
		otel.SetLoggerProvider(lp)
		rec = progress.NewRecorder()
	default:
		rec = progress.NewRecorder()
	}
	tr := progress.Transition{Stream: progress.StreamLifecycle, Condition: progress.Condition{Status: "Running"}}
	for range 3 {
		for _, err := range []error{
			rec.Record(ctx, progress.OperationStarted("Install")),
			rec.RecordTransition(ctx, tr),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
		if mode == "unset" {
			if err := progress.Record(ctx, progress.OperationStarted("Install")); err != nil {
				t.Fatal(err)
			}
		}
	}
}
