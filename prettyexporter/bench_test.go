package prettyexporter_test

import (
	"context"
	"io"
	"testing"

	"go.opentelemetry.io/otel/exporters/stdout/stdoutlog"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/prettyexporter"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
)

// playbookBatch returns the records of a small Ansible run, emitted by a
// progress.Recorder through the SDK inside a real span with tracectx
// values, as an exporter receives them: play and task events with real
// detail keys, common progress, a failure, the playbook result and a
// condition transition.
func playbookBatch(b *testing.B) []sdklog.Record {
	h := newHarness(b, &progresstest.Exporter{}) // the keeper of the harness collects
	ctx, _ := h.span(b)
	env := progress.Envelope{
		Component: progress.Component{Name: "ansible-driver", Version: "1.4.0"},
		Resource:  progress.Resource{Type: "Play", ID: "site.yml"},
		Scope:     map[string]string{"organization": "acme", "project": "web"},
	}
	rec := func(e progress.Event) {
		e.Envelope = env
		if err := h.rec.Record(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	rec(progress.Event{Type: "ansible/PlayStarted", Details: map[string]any{"playName": "site"}})
	tasks := []string{"Gather facts", "Install nginx", "Write config", "Start nginx"}
	hosts := []string{"web-1", "web-2"}
	for i, task := range tasks {
		rec(progress.Event{Type: "ansible/TaskStarted", Details: map[string]any{
			"taskName": task, "args": map[string]any{"name": "nginx", "state": "present"}, "argsHidden": false}})
		for _, host := range hosts {
			rec(progress.Event{Type: "ansible/TaskStartedOnHost", Details: map[string]any{
				"taskName": task, "hostName": host, "args": map[string]any{"name": "nginx"}, "argsHidden": false}})
			rec(progress.Event{Type: "ansible/TaskCompletedOnHost", Details: map[string]any{
				"taskName": task, "hostName": host, "itemLabel": "", "delegatedHostName": "",
				"taskResult": map[string]any{"msg": "ok", "changed": i%2 == 0, "failed": false, "skipped": false, "rc": 0,
					"results": []any{map[string]any{"item": "nginx", "changed": true}}}}})
		}
		rec(progress.Progress(int64(i+1), int64(len(tasks)), "tasks"))
	}
	rec(progress.Event{Type: "ansible/TaskRetryOnHost", Severity: log.SeverityWarn, Details: map[string]any{
		"taskName": "Start nginx", "hostName": "web-2", "delegatedHostName": "",
		"taskResult": map[string]any{"msg": "port 80 busy", "rc": 1, "failed": true}}})
	rec(progress.Event{Type: "ansible/PlaybookResult", Details: map[string]any{
		"plays": []any{map[string]any{"play": map[string]any{"name": "site", "id": "p-1"}}},
		"hostStats": map[string]any{
			"web-1": map[string]any{"ok": 4, "changed": 2, "failures": 0, "skipped": 0, "unreachable": 0},
			"web-2": map[string]any{"ok": 4, "changed": 2, "failures": 0, "skipped": 0, "unreachable": 0},
		}}})
	if err := h.rec.RecordTransition(ctx, progress.Transition{
		Stream:    progress.StreamProvisioning,
		Condition: progress.Condition{Status: "True", Reason: "Provisioned", Message: "play finished"},
		Previous:  &progress.Condition{Status: "False", Reason: "Provisioning"},
		Envelope:  progress.Envelope{Resource: progress.Resource{Type: "Cluster", ID: "web"}, Scope: env.Scope},
	}); err != nil {
		b.Fatal(err)
	}
	return h.kept.Records()
}

// BenchmarkExporter exports the same batch through each exporter to
// io.Discard. One op is one batch; records/s is the throughput.
func BenchmarkExporter(b *testing.B) {
	batch := playbookBatch(b)
	mk := map[string]func() (sdklog.Exporter, error){
		"pretty": func() (sdklog.Exporter, error) {
			return prettyexporter.New(prettyexporter.WithWriter(io.Discard), prettyexporter.WithColor(prettyexporter.ColorNever))
		},
		"json": func() (sdklog.Exporter, error) {
			return prettyexporter.NewJSON(prettyexporter.WithWriter(io.Discard))
		},
		"stdoutlog": func() (sdklog.Exporter, error) {
			return stdoutlog.New(stdoutlog.WithWriter(io.Discard))
		},
	}
	for _, name := range []string{"pretty", "json", "stdoutlog"} {
		b.Run(name, func(b *testing.B) {
			exp, err := mk[name]()
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := exp.Export(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "records/s")
		})
	}
}
