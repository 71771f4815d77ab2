package pythondriver

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
)

// moduleScript records three events with the progressotel Python module
// (python/progressotel), as a driver's code run by `progressotel run`
// does; it fails unless the run took all three.
const moduleScript = `
import sys
sys.path.insert(0, sys.argv[1])
from progressotel import ProgressEventLogWriterService, ResourceTransitionProgressEvent
events = ProgressEventLogWriterService(component={"name": "py-task", "version": "0.1"})
assert events.mode == "handoff", events.mode
for i, typ in enumerate(["py/One", "py/Two", "py/Three"]):
    events.add(ResourceTransitionProgressEvent(typ, {"i": i, "a.b": {"c": [1, None]}}))
ok = events.shutdown(timeout=30)
sys.exit(0 if ok and events.stats()["exported"] == 3 else 1)
`

// Under `progressotel run`, the module hands its events to the run over
// the run's socket (PROGRESSOTEL_SOCKET): they are recorded in the run's
// trace, with its tracectx, between the run's own events, in one
// contiguous sequence; their envelope is the module's where it sets one,
// the run's elsewhere.
func TestPythonModuleUnderRunContinuesTheRunsSequence(t *testing.T) {
	py := testutil.RequireTool(t, debianPython, "apt-get install python3")
	bin := buildProgressotel(t)
	out := filepath.Join(t.TempDir(), "records.jsonl")
	pkg, err := filepath.Abs(filepath.Join("..", "..", "python"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, "progressotel"), "run", "--operation", "Install",
		"--resource-type", "Assembly", "--resource-id", "asm-1", "--", py, "-c", moduleScript, pkg)
	cmd.Env = append(cleanEnv(), "OTEL_LOGS_EXPORTER=json", "PROGRESSOTEL_OUTPUT="+out,
		"X_TRACECTX_TRANSACTIONID=tx-7", "X_TRACECTX_TENANTID=tenant-a", "PYTHONDONTWRITEBYTECODE=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("progressotel run: %v\n%s", err, b)
	}

	records := readRecords(t, out)
	var types []string
	for _, r := range records {
		types = append(types, r["message"].(string))
	}
	want := []string{"common/OperationStarted", "py/One", "py/Two", "py/Three", "common/OperationCompleted"}
	if len(records) != len(want) {
		t.Fatalf("records %v, want %v", types, want)
	}
	trace := records[0]["traceId"]
	for i, r := range records {
		if types[i] != want[i] {
			t.Errorf("record %d is %s, want %s (all: %v)", i, types[i], want[i], types)
		}
		if seq, _ := r["sequence"].(float64); int(seq) != i+1 {
			t.Errorf("%s: sequence %v, want %d", types[i], r["sequence"], i+1)
		}
		if r["traceId"] != trace || trace == nil {
			t.Errorf("%s: trace %v, want the run's %v", types[i], r["traceId"], trace)
		}
		if r["tracectx.transactionid"] != "tx-7" || r["tenant"] != "tenant-a" {
			t.Errorf("%s: tracectx.transactionid %v, tenant %v; want tx-7, tenant-a", types[i], r["tracectx.transactionid"], r["tenant"])
		}
	}
	one := records[1]
	if c, _ := one["component"].(map[string]any); c["name"] != "py-task" {
		t.Errorf("py/One: component %v, want the module's", one["component"])
	}
	if res, _ := one["resource"].(map[string]any); res["id"] != "asm-1" {
		t.Errorf("py/One: resource %v, want the run's", one["resource"])
	}
	d, _ := one["details"].(map[string]any)
	if ab, _ := d["a.b"].(map[string]any); d["i"] != float64(0) || ab == nil {
		t.Errorf("py/One: details %v", one["details"])
	}
}
