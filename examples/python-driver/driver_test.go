// Package pythondriver tests the Python example driver with Debian's
// python3 (/usr/bin/python3), the real progressotel command and the real
// ansible-playbook.
package pythondriver

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/progressotel/progressotel/internal/testkit/otlptest"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/propagation"
)

// debianPython is the interpreter Ignition drivers run on here; the python3
// on PATH may be another.
const debianPython = "/usr/bin/python3"

// buildProgressotel builds the command into a directory for PATH.
func buildProgressotel(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "progressotel"), "../../cmd/progressotel")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}

// cleanEnv is the test's environment without a caller's telemetry
// settings.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "OTEL_") || strings.HasPrefix(name, "X_TRACECTX_") || strings.HasPrefix(name, "PROGRESSOTEL_") ||
			name == "TRACEPARENT" || name == "TRACESTATE" || name == "BAGGAGE" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// The driver's request gives every record its tracectx and one trace id:
// the driver's own emits, the run of the playbook, and the emit of a
// playbook task.
func TestPythonDriverRecordsCarryTheRequestsContext(t *testing.T) {
	py := testutil.RequireTool(t, debianPython, "apt-get install python3")
	testutil.RequireTool(t, "ansible-playbook", "apt-get install ansible-core")
	testutil.RequireTool(t, "ansible-runner", "apt-get install python3-ansible-runner")
	bin := buildProgressotel(t)
	out := filepath.Join(t.TempDir(), "records.jsonl")

	cmd := exec.Command(py, "driver.py", "request.json")
	cmd.Env = append(cleanEnv(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"OTEL_LOGS_EXPORTER=json", "PROGRESSOTEL_OUTPUT="+out, "ANSIBLE_NOCOLOR=1")
	stdout, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("driver: %v\n%s%s", err, stdout, stderr)
	}
	var result map[string]any
	if err := json.Unmarshal(stdout, &result); err != nil || result["status"] != "COMPLETE" {
		t.Fatalf("driver result %q: %v", stdout, err)
	}

	records := readRecords(t, out)
	var got []string
	traceIDs := map[string]bool{}
	want := map[string]string{
		"tracectx.transactionid": "7d9b1c52-tx", "tracectx.processid": "proc-42",
		"tracectx.taskid": "task-1", "tracectx.tenantid": "tenant-a", "tenant": "tenant-a",
	}
	for _, r := range records {
		got = append(got, r["message"].(string))
		traceIDs[r["traceId"].(string)] = true
		for k, v := range want {
			if r[k] != v {
				t.Errorf("%s: %s = %v, want %s", r["message"], k, r[k], v)
			}
		}
	}
	if len(traceIDs) != 1 {
		t.Errorf("records in %d traces, want one: %v", len(traceIDs), traceIDs)
	}
	// The run's own events, Ansible's (through the ansible adapter), the
	// emit of a playbook task, the Python module's in another (report.py),
	// and the driver's.
	for _, typ := range []string{"driver/RequestAccepted", "common/OperationStarted", "ansible/PlayStarted", "ansible/TaskStarted",
		"driver/ConfigRendered", "driver/ServiceStarted", "ansible/PlaybookResult", "common/OperationCompleted", "driver/RequestCompleted"} {
		if !slices.Contains(got, typ) {
			t.Errorf("no %s record among %v", typ, got)
		}
	}
	if got[0] != "driver/RequestAccepted" || got[len(got)-1] != "driver/RequestCompleted" {
		t.Errorf("order: %v", got)
	}
}

// With only OTEL_EXPORTER_OTLP_ENDPOINT set, the production setup of the
// README, the driver's stdout is its result alone: the events go to the
// collector (a real OTLP/HTTP endpoint here), none to stdout.
func TestPythonDriverStdoutIsItsResultWithOTLP(t *testing.T) {
	py := testutil.RequireTool(t, debianPython, "apt-get install python3")
	testutil.RequireTool(t, "ansible-playbook", "apt-get install ansible-core")
	testutil.RequireTool(t, "ansible-runner", "apt-get install python3-ansible-runner")
	bin := buildProgressotel(t)
	srv := otlptest.StartHTTP(t)
	cmd := exec.Command(py, "driver.py", "request.json")
	cmd.Env = append(cleanEnv(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://"+srv.Addr, "ANSIBLE_NOCOLOR=1")
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("driver: %v\n%s", err, stdout)
	}
	lines := strings.Split(strings.TrimSpace(string(stdout)), "\n")
	var result map[string]any
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &result) != nil || result["status"] != "COMPLETE" {
		t.Fatalf("stdout %q: want the driver's result alone", stdout)
	}
	if got := srv.LogEventNames(); !slices.Contains(got, "driver/RequestAccepted") || !slices.Contains(got, "ansible/PlaybookResult") {
		t.Fatalf("the collector got %v", got)
	}
}

// The driver's spelling of tracectx keys in the environment is
// progressotel's (propagation.EnvName).
func TestPythonEnvNameMatchesGo(t *testing.T) {
	py := testutil.RequireTool(t, debianPython, "apt-get install python3")
	keys := []string{"transactionid", "TenantId", "request-id", "driver_req.id", "a_2d", "9lives"}
	b, _ := json.Marshal(keys)
	cmd := exec.Command(py, "-c", `import json, sys; sys.path.insert(0, "."); import driver
for k in json.loads(sys.argv[1]): print(driver.env_name(k))`, string(b))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	names := strings.Fields(string(out))
	for i, k := range keys {
		want, err := propagation.EnvName(k)
		if err != nil {
			t.Fatal(err)
		}
		if i >= len(names) || names[i] != want {
			t.Errorf("env_name(%q) = %v, Go's EnvName = %s", k, names, want)
		}
	}
}

func readRecords(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []map[string]any
	for _, r := range testutil.JSONLines(t, f) {
		recs = append(recs, r)
	}
	return recs
}
