package prettyexporter_test

import (
	"context"
	"os"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/prettyexporter"
	"github.com/progressotel/progressotel/progress"
)

// fixedSpan returns a context inside a span with fixed ids, so that the
// examples print the same trace id on every run.
func fixedSpan() context.Context {
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
	return trace.ContextWithSpanContext(context.Background(), sc)
}

func ExampleNew() {
	exp, _ := prettyexporter.New(
		prettyexporter.WithWriter(os.Stdout),
		prettyexporter.WithColor(prettyexporter.ColorNever),
		prettyexporter.WithoutTime(),
	)
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)))
	defer lp.Shutdown(context.Background())
	rec := progress.NewRecorder(progress.WithLoggerProvider(lp), progress.WithoutSequence())

	ctx := fixedSpan()
	env := progress.Envelope{Resource: progress.Resource{Type: "Play", ID: "site.yml"}}
	_ = rec.Record(ctx, progress.Event{
		Type:     "ansible/TaskStarted",
		Details:  map[string]any{"taskName": "Install nginx", "args": map[string]any{"name": "nginx", "state": "present"}, "argsHidden": false},
		Envelope: env,
	})
	_ = rec.Record(ctx, progress.Event{
		Type:     "ansible/TaskFailedOnHost",
		Severity: 17,
		Details:  map[string]any{"taskName": "Start nginx", "hostName": "web-1", "taskResult": map[string]any{"msg": "unit not found\n", "rc": 5, "failed": true}},
		Envelope: env,
	})
	_ = rec.RecordTransition(ctx, progress.Transition{
		Stream:    progress.StreamProvisioning,
		Condition: progress.Condition{Status: "True", Reason: "Provisioned", Message: "Cluster is ready"},
		Previous:  &progress.Condition{Status: "False", Reason: "Provisioning"},
		Envelope:  progress.Envelope{Resource: progress.Resource{Type: "Cluster", ID: "foo"}, ObservedGeneration: 2},
		Time:      time.Date(2026, 11, 29, 14, 3, 9, 0, time.UTC),
	})
	// Output:
	// INF ansible/TaskStarted  Play/site.yml  4bf92f35  args.name=nginx args.state=present argsHidden=false taskName="Install nginx"
	// ERR ansible/TaskFailedOnHost  Play/site.yml  4bf92f35  hostName=web-1 taskName="Start nginx" taskResult.failed=true taskResult.msg="unit not found\n" taskResult.rc=5
	// INF provisioning  Cluster/foo  False (Provisioning) → True (Provisioned) "Cluster is ready"  4bf92f35  generation=2
}

func ExampleNewJSON() {
	exp, _ := prettyexporter.NewJSON(prettyexporter.WithWriter(os.Stdout))
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)))
	defer lp.Shutdown(context.Background())
	rec := progress.NewRecorder(progress.WithLoggerProvider(lp), progress.WithoutSequence())

	_ = rec.Record(fixedSpan(), progress.Event{
		Type:     "ansible/PlaybookResult",
		Time:     time.Date(2026, 11, 29, 14, 3, 7, 412000000, time.UTC),
		Details:  map[string]any{"plays": []any{map[string]any{"play": map[string]any{"name": "site", "id": "p-1"}}}, "hostStats": map[string]any{"web-1": map[string]any{"ok": 3, "failures": 0}}},
		Envelope: progress.Envelope{Resource: progress.Resource{Type: "Play", ID: "site.yml"}},
	})
	// Output:
	// {"@timestamp":"2026-11-29T14:03:07.412Z","@version":"1","level":"INFO","logger_name":"github.com/progressotel/progressotel/progress","message":"ansible/PlaybookResult","eventType":"ResourceTransitionProgressEvent","progressEventType":"ansible/PlaybookResult","details":{"hostStats":{"web-1":{"failures":0,"ok":3}},"plays":[{"play":{"id":"p-1","name":"site"}}]},"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"00f067aa0ba902b7","resource":{"type":"Play","id":"site.yml"}}
}
