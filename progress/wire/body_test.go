package wire_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/progress/wire"
)

func TestMessageBodyNestsDetails(t *testing.T) {
	sink := progresstest.NewSink()
	rec := sink.Recorder()
	details := map[string]any{
		"taskName": "t", "a.b": "dotted", "nil": nil, "empty": map[string]any{},
		"taskResult": map[string]any{"rc": int64(0), "results": []any{"x", map[string]any{"k": true}}},
	}
	if err := rec.Record(context.Background(), progress.Event{Type: "ansible/TaskStarted", Details: details}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Record(context.Background(), progress.Event{Type: "common/Empty"}); err != nil {
		t.Fatal(err)
	}
	if err := rec.RecordTransition(context.Background(), progress.Transition{Stream: "lifecycle", Condition: progress.Condition{Status: "True"}}); err != nil {
		t.Fatal(err)
	}
	recs := sink.Records()
	body, ok := wire.MessageBody(&recs[0])
	if !ok {
		t.Fatal("a progress event must have a message body")
	}
	want := map[string]any{"eventType": wire.EventType, "progressEventType": "ansible/TaskStarted", "details": details}
	if got := wire.ValueOf(body); !reflect.DeepEqual(got, want) {
		t.Errorf("message body:\n got %#v\nwant %#v", got, want)
	}
	body, _ = wire.MessageBody(&recs[1])
	if got := wire.ValueOf(body).(map[string]any)["details"]; !reflect.DeepEqual(got, map[string]any{}) {
		t.Errorf("empty details = %#v, want an empty map", got)
	}
	if _, ok := wire.MessageBody(&recs[2]); ok {
		t.Errorf("a transition has no message body")
	}
}
