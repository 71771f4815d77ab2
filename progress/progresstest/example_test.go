package progresstest_test

import (
	"context"
	"fmt"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
)

// installPackage stands for driver code under test: it only knows
// progress.Record.
func installPackage(ctx context.Context, name string) {
	_ = progress.Record(ctx, progress.Event{Type: "mydriver/PackageInstalled", Details: map[string]any{"name": name}})
}

// A Sink captures what progress.Record emits; Events decodes it, with the
// trace correlation the SDK filled in. In a test function, write
// sink := progresstest.Install(t) instead of the first three lines: it also
// restores the previous globals when the test ends.
func ExampleSink() {
	sink := progresstest.NewSink()
	progress.SetDefault(sink.Recorder())
	defer progress.SetDefault(nil)

	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("test").Start(context.Background(), "Install")
	installPackage(ctx, "nginx")
	span.End()

	for _, ev := range sink.Events() {
		fmt.Println(ev.EventName, ev.Details["name"], ev.CorrelatedWith(span))
	}
	// Output: mydriver/PackageInstalled nginx true
}

func TestInstallRestoresDefault(t *testing.T) {
	before := progress.Default()
	t.Run("inner", func(t *testing.T) {
		sink := progresstest.Install(t)
		installPackage(context.Background(), "a")
		if got := sink.Types(); len(got) != 1 || got[0] != "mydriver/PackageInstalled" {
			t.Fatalf("types = %v", got)
		}
	})
	if progress.Default() != before {
		t.Fatalf("Install did not restore the default Recorder")
	}
}
