package e2e

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/progressotel/progressotel/collector-config/e2e/ordercheck"
)

// A driver's three-level script through `progressotel run` (the real
// binary), the real collector and the Kafka-protocol broker: every record,
// the nested runs' and their emits', lands in the top-level run's
// tenant's topic (none in progress_unrouted), and the consumer's order
// check reads one contiguous sequence for the trace.
func TestNestedRunsReachTheirTenantInOneSequence(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "progressotel")
	build := exec.Command("go", "build", "-o", bin, "./cmd/progressotel")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building progressotel: %v\n%s", err, out)
	}
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	col := newCollector(t, b.addr(), []string{"acme"}, nil)
	col.start()

	level3 := `progressotel emit --type deploy/Deepest --detail level:=3`
	level2 := `progressotel emit --type deploy/Inner --detail level:=2; progressotel run --operation test -- sh -c "` + level3 + `"`
	script := `progressotel emit --type deploy/Step --detail level:=1; progressotel run --operation build -- sh -c '` + level2 + `'`
	cmd := exec.Command(bin, "run", "--operation", "Deploy", "--tenant", "acme", "--resource-type", "app", "--resource-id", "web",
		"--", "sh", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"OTEL_LOGS_EXPORTER=otlp", "OTEL_TRACES_EXPORTER=none", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://"+col.grpc, "PROGRESSOTEL_SHUTDOWN_TIMEOUT=30s")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("progressotel run: %v\n%s", err, out)
	}

	const total = 9 // three OperationStarted and Completed, three emits
	cons.waitFor(t, 90*time.Second, "9 messages", func(m []message) bool { return len(m) >= total })
	time.Sleep(time.Second) // let any stray extra message show up
	msgs := cons.all()
	if len(msgs) != total {
		t.Errorf("%d messages, want %d:%s", len(msgs), total, summary(msgs))
	}
	var check ordercheck.Checker
	ops := map[string]bool{}
	for _, m := range msgs {
		if m.Topic != "progress_events_acme" {
			t.Errorf("a record on %s, not the tenant's topic: %s", m.Topic, m.Value)
		}
		body := m.body(t)
		if det, _ := body["details"].(map[string]any); det["operation"] != nil {
			ops[det["operation"].(string)] = true
		}
		check.Add(ordercheck.Record{Topic: m.Topic, Partition: m.Partition, Value: m.Value})
	}
	rep := check.Report()
	if len(rep.Runs) != 1 || !rep.Runs[0].InOrder() || rep.Runs[0].Highest != total {
		t.Errorf("order check: %s", rep)
	}
	for _, op := range []string{"Deploy", "build", "test"} {
		if !ops[op] {
			t.Errorf("no event of the operation %s; have %v", op, strings.Join(slices.Sorted(maps.Keys(ops)), ", "))
		}
	}
}
