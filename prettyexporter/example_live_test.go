package prettyexporter_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"go.opentelemetry.io/otel/codes"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/progressotel/progressotel/prettyexporter"
	"github.com/progressotel/progressotel/progress"
)

// The live view on os.Stdout, which is not a terminal here: plain lines,
// the operation's resource, trace id and transaction id in one header
// line. On a terminal the same exporter draws the live tree instead.
func ExampleNewLive() {
	exp, _ := prettyexporter.NewLive(
		prettyexporter.WithWriter(os.Stdout),
		prettyexporter.WithColor(prettyexporter.ColorNever),
		prettyexporter.WithoutTime(),
	)
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)))
	rec := progress.NewRecorder(progress.WithLoggerProvider(lp), progress.WithoutSequence())

	ctx := fixedSpan()
	env := progress.Envelope{Resource: progress.Resource{Type: "Play", ID: "site.yml"}}
	for _, e := range []progress.Event{
		progress.OperationStarted("Install"),
		{Type: "ansible/TaskStarted", Details: map[string]any{"taskName": "Install nginx"}},
		progress.Progress(1, 2, "tasks"),
		progress.OperationCompleted("Install", 0),
	} {
		e.Envelope = env
		_ = rec.Record(ctx, e)
	}
	_ = lp.Shutdown(context.Background()) // shuts the exporter down: everything is written
	// Output:
	// ▸ Install  Play/site.yml  trace 4bf92f35
	// INF common/OperationStarted  operation=Install
	// INF ansible/TaskStarted  taskName="Install nginx"
	// INF common/Progress  completed=1 total=2 unit=tasks
	// INF common/OperationCompleted  operation=Install
}

// A program's own output (a wrapped tool's lines, a slog handler) goes
// through Output, so that on a terminal it is printed above the live
// area instead of through it.
func ExampleLiveExporter_Output() {
	exp, _ := prettyexporter.NewLive(prettyexporter.WithWriter(os.Stdout), prettyexporter.WithColor(prettyexporter.ColorNever))
	defer exp.Shutdown(context.Background())

	logger := slog.New(slog.NewTextHandler(exp.Output(), &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // for a stable example
			}
			return a
		},
	}))
	logger.Info("starting the playbook", "hosts", 2)
	fmt.Fprintln(exp.Output(), "PLAY [web] *****")
	_ = exp.ForceFlush(context.Background())
	// Output:
	// level=INFO msg="starting the playbook" hosts=2
	// PLAY [web] *****
}

// A Go driver's own spans are the live view's tree, with nothing to map:
// here off a terminal (plain lines), a step fails in a sub-step, and the
// failure summary at the end says where and why. On a terminal the steps
// are rows of the live tree.
func ExampleLiveExporter_SpanProcessor() {
	exp, _ := prettyexporter.NewLive(prettyexporter.WithWriter(os.Stdout),
		prettyexporter.WithColor(prettyexporter.ColorNever), prettyexporter.WithoutTime())
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(exp.LogProcessor()))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(exp.SpanProcessor()))
	rec := progress.NewRecorder(progress.WithLoggerProvider(lp), progress.WithoutSequence())
	tracer := tp.Tracer("driver")

	ctx, deploy := tracer.Start(fixedSpan(), "deploy")
	_ = rec.Record(ctx, progress.OperationStarted("Deploy"))
	step, boot := tracer.Start(ctx, "boot the VM")
	_, attach := tracer.Start(step, "attach the volume")
	attach.SetStatus(codes.Error, "volume vol-7 is attached elsewhere")
	attach.End()
	boot.SetStatus(codes.Error, "a sub-step failed")
	boot.End()
	_ = rec.Record(ctx, progress.OperationFailed("Deploy", "INTERNAL_ERROR", "boot failed"))
	deploy.End()
	_ = lp.Shutdown(context.Background())
	// Output:
	// ▸ Deploy  trace 4bf92f35
	// INF common/OperationStarted  operation=Deploy
	// ERR common/OperationFailed  description="boot failed" failureCode=INTERNAL_ERROR operation=Deploy error.type=INTERNAL_ERROR
	// ✗ Deploy failed: 1 failure
	//     INTERNAL_ERROR: boot failed
	//   ✗ boot the VM › attach the volume  failed
	//       volume vol-7 is attached elsewhere
}
