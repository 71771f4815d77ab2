package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/progressotel/progressotel/progress"
)

// local.yaml: every progress record is also appended to
// $PROGRESS_LOCAL_FILE as OTLP JSON, with the same TNCO body (redacted) as
// the Kafka message, whatever its tenant; ordinary logs are not; and the
// debug exporter prints each record in full.
func TestLocalFileRoute(t *testing.T) {
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	file := filepath.Join(t.TempDir(), "progress.jsonl")
	col := newCollector(t, b.addr(), []string{"tenant-a"}, map[string]string{"PROGRESS_LOCAL_FILE": file})
	col.start()
	d := newDriver(t, col.grpc, driverOpt{})

	ctx, span := d.tp.Tracer("driver").Start(context.Background(), "run")
	for i, tenant := range []string{"tenant-a", "tenant-a", "", "tenant-x"} {
		env := progress.Envelope{}
		if tenant != "" {
			env.Scope = map[string]string{"tenant": tenant}
		}
		if err := d.rec.Record(ctx, progress.Event{
			Type:     "ansible/TaskCompletedOnHost",
			Details:  map[string]any{"taskName": "local-route", "n": i, "db": map[string]any{"password": "hunter2"}},
			Envelope: env,
		}); err != nil {
			t.Fatal(err)
		}
	}
	d.ordinary(ctx, "ordinary-local-marker")
	span.End()
	d.flush(t)

	msgs := cons.waitFor(t, 60*time.Second, "4 events on Kafka", func(m []message) bool { return countMarker(m, "local-route") == 4 })
	kafka := map[float64]map[string]any{}
	for _, m := range msgs {
		body := m.body(t)
		kafka[body["details"].(map[string]any)["n"].(float64)] = body
	}

	var records []otlpLogRecord
	deadline := time.Now().Add(30 * time.Second)
	for len(records) < 4 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond) // the file exporter flushes every second
		records, _, _ = readOTLPFile(t, file)
	}
	if len(records) != 4 {
		t.Fatalf("%s holds %d records, want the 4 progress events", file, len(records))
	}
	for _, r := range records {
		body, _ := r.Body.raw().(map[string]any)
		det, _ := body["details"].(map[string]any)
		n, _ := det["n"].(float64)
		if want := kafka[n]; !reflect.DeepEqual(jsonOf(t, body), want) {
			gb, _ := json.Marshal(body)
			wb, _ := json.Marshal(want)
			t.Errorf("event %v: the local file's body differs from the Kafka message:\n file  %s\n kafka %s", n, gb, wb)
		}
		if r.EventName != "ansible/TaskCompletedOnHost" || r.TraceID != span.SpanContext().TraceID().String() {
			t.Errorf("event %v: event name %q, trace %q", n, r.EventName, r.TraceID)
		}
	}
	out := col.out.String()
	if !strings.Contains(out, "local-route") {
		t.Errorf("the debug exporter did not print the records in full")
	}
	for _, leak := range []string{"hunter2", "ordinary-local-marker"} {
		if raw := readFile(t, file); strings.Contains(raw, leak) {
			t.Errorf("%q is in the local file", leak)
		}
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
