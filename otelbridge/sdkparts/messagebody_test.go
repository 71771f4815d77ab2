package sdkparts_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/progress/wire"
)

func TestMessageBodyExporter(t *testing.T) {
	mem := &progresstest.Exporter{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(sdkparts.NewMessageBodyExporter(mem))))
	rec := progress.NewRecorder(progress.WithLoggerProvider(lp))
	ctx := context.Background()
	details := map[string]any{"taskResult": map[string]any{"rc": int64(2)}, "a.b": "x"}
	if err := rec.Record(ctx, progress.Event{Type: "ansible/TaskFailedOnHost", Details: details}); err != nil {
		t.Fatal(err)
	}
	if err := rec.RecordTransition(ctx, progress.Transition{Stream: "lifecycle", Condition: progress.Condition{Status: "True", Reason: "Running"}}); err != nil {
		t.Fatal(err)
	}
	var plain otellog.Record
	plain.SetBody(attribute.StringValue("an ordinary log"))
	lp.Logger("driver").Emit(ctx, plain)

	if len(mem.Records()) != 3 {
		t.Fatalf("%d records exported", len(mem.Records()))
	}
	for i, r := range mem.Records()[:2] {
		body := r.Body()
		if body.Type() != attribute.BYTESLICE {
			t.Fatalf("record %d: body %v, want the message as bytes", i, body.Type())
		}
		want, _ := wire.AppendMessage(nil, &r)
		if string(body.AsByteSlice()) != string(want) {
			t.Errorf("record %d: body\n%s\nwant the message\n%s", i, body.AsByteSlice(), want)
		}
	}
	var msg map[string]any
	if err := json.Unmarshal(mem.Records()[0].Body().AsByteSlice(), &msg); err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"taskResult": map[string]any{"rc": 2.0}, "a.b": "x"}; !reflect.DeepEqual(msg["details"], want) {
		t.Errorf("details = %#v, want nested %#v", msg["details"], want)
	}
	if d, err := wire.Decode(&mem.Records()[0]); err != nil || !reflect.DeepEqual(d.Details, details) {
		t.Errorf("attributes must stay flat and decodable: %v %v", d.Details, err)
	}
	if got := mem.Records()[2].Body().AsString(); got != "an ordinary log" {
		t.Errorf("ordinary log body changed: %q", got)
	}
}

// The caller's records are never modified (Exporter contract).
func TestMessageBodyExporterDoesNotModifyInput(t *testing.T) {
	mem := &progresstest.Exporter{}
	capture := &progresstest.Exporter{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(capture)))
	rec := progress.NewRecorder(progress.WithLoggerProvider(lp))
	if err := rec.Record(context.Background(), progress.Event{Type: "common/X", Details: map[string]any{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	in := capture.Records()
	if err := sdkparts.NewMessageBodyExporter(mem).Export(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if in[0].Body().Type() != attribute.EMPTY {
		t.Errorf("input record modified: body %v", in[0].Body())
	}
	if mem.Records()[0].Body().Type() != attribute.BYTESLICE {
		t.Errorf("output body not the message")
	}
}
