package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/progressotel/progressotel/internal/testkit/redactcorpus"
	"github.com/progressotel/progressotel/progress"
)

// The collector's second pass catches the shapes the library's Redactor
// catches: the shared corpus, sent by a driver whose own redaction is off
// (as a driver not built on the library sends it), reaches Kafka with no
// secret left: tnco redacts the attributes before it builds the message.
// A detail under each of progress.DefaultSecretKeys is masked too.
func TestRedactionCorpusThroughTheCollector(t *testing.T) {
	const topic = "progress_events_tenant-a"
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	col := newCollector(t, b.addr(), []string{"tenant-a"}, nil)
	col.start()
	d := newDriver(t, col.grpc, driverOpt{})
	env := progress.Envelope{Scope: map[string]string{"tenant": "tenant-a"}}
	keyed := map[string]any{}
	for i, k := range progress.DefaultSecretKeys() {
		keyed["my_"+k+"_x"] = fmt.Sprintf("keyed-secret-%d", i)
	}
	for i, c := range redactcorpus.Cases {
		if err := d.rec.Record(context.Background(), progress.Event{Type: "ansible/TaskCompletedOnHost", Envelope: env,
			Details: map[string]any{"case": i, "msg": c.Text, "lines": []string{c.Text},
				"taskResult": map[string]any{"stdout": c.Text}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.rec.Record(context.Background(), progress.Event{Type: "demo/Keyed", Envelope: env, Details: keyed}); err != nil {
		t.Fatal(err)
	}
	d.flush(t)
	want := len(redactcorpus.Cases) + 1
	msgs := cons.waitFor(t, 60*time.Second, "the corpus", func(m []message) bool { return len(onTopic(m, topic)) >= want })
	var all strings.Builder
	for _, m := range onTopic(msgs, topic) {
		all.Write(m.Value)
		all.WriteByte('\n')
	}
	if leaks := redactcorpus.Leaks(all.String()); len(leaks) > 0 {
		t.Errorf("reached Kafka: %v", leaks)
	}
	if strings.Contains(all.String(), "keyed-secret-") {
		t.Errorf("a value under a secret key reached Kafka:\n%s", grepLines(all.String(), "keyed-secret-"))
	}
	records := col.metric("otelcol_processor_tnco_records", nil)
	if records < float64(want) {
		t.Errorf("tnco built %v messages, want %d: the test did not test it\n%s", records, want,
			grepLines(col.metricsText(t), "otelcol_processor_tnco_records"))
	}
}
