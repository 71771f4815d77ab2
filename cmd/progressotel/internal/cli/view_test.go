package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/progressotel/progressotel/cmd/progressotel/internal/view"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
)

// startView runs progressotel view on free loopback ports, writing to a buffer (not a terminal:
// plain lines), until the test ends; extra are more flags.
func startView(t *testing.T, extra ...string) (*view.Server, *testutil.SyncBuffer) {
	t.Helper()
	fs, o := newViewFlags()
	if err := fs.Parse(append([]string{"--http", "127.0.0.1:0", "--grpc", "127.0.0.1:0"}, extra...)); err != nil {
		t.Fatal(err)
	}
	ready := make(chan *view.Server, 1)
	o.ready = func(s *view.Server) { ready <- s }
	out := &testutil.SyncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Status, 1)
	go func() { done <- o.run(ctx, stdio{stdout: out, stderr: out}) }()
	var srv *view.Server
	select {
	case srv = <-ready:
	case st := <-done:
		t.Fatalf("view ended: %v\n%s", st, out.String())
	}
	t.Cleanup(func() {
		cancel()
		if st := <-done; !st.OK() {
			t.Errorf("view ended with %v", st)
		}
	})
	return srv, out
}

// waitOutput waits until the view's output matches every pattern, and returns it.
func waitOutput(t *testing.T, out *testutil.SyncBuffer, patterns ...string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := out.String()
		missing := ""
		for _, p := range patterns {
			if !regexp.MustCompile(p).MatchString(s) {
				missing = p
				break
			}
		}
		if missing == "" {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("no line matching %q in the view's output:\n%s", missing, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pythonSender is a stdlib-only OTLP/JSON sender: a trace whose child span's record arrives
// before either span, then the spans child first, as an SDK exports them; then a malformed
// request and an oversized one, whose status codes it prints.
const pythonSender = `
import json, sys, time, urllib.request, urllib.error
base = sys.argv[1]
def post(path, body, ctype="application/json"):
    req = urllib.request.Request(base + path, data=body, headers={"Content-Type": ctype}, method="POST")
    try:
        with urllib.request.urlopen(req) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
tid, root, child = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", "00f067aa0ba902b7"
now = time.time_ns()
res = {"attributes": [{"key": "service.name", "value": {"stringValue": "py"}}]}
log = {"timeUnixNano": str(now), "eventName": "deploy/StepStarted", "severityNumber": 9,
       "body": {"stringValue": "step started"}, "traceId": tid, "spanId": child}
print("logs", post("/v1/logs", json.dumps({"resourceLogs": [{"resource": res, "scopeLogs": [{"logRecords": [log]}]}]}).encode()))
def span(sid, parent, name, code):
    s = {"traceId": tid, "spanId": sid, "name": name, "kind": 1, "startTimeUnixNano": str(now),
         "endTimeUnixNano": str(now + 1500000000), "status": {"code": code, "message": "disk full" if code == 2 else ""}}
    if parent:
        s["parentSpanId"] = parent
    return {"resourceSpans": [{"resource": res, "scopeSpans": [{"spans": [s]}]}]}
print("child", post("/v1/traces", json.dumps(span(child, root, "copy files", 2)).encode()))
print("root", post("/v1/traces", json.dumps(span(root, "", "py deploy", 0)).encode()))
print("malformed", post("/v1/traces", b'{"resourceSpans": [{'))
print("badid", post("/v1/traces", json.dumps(span("zz", "", "x", 0)).encode()))
print("oversized", post("/v1/logs", b" " * 70000))
`

// TestViewPythonJSONSender: a stdlib-only Python sender of OTLP/JSON: the record opens its span's
// row, the spans fill it in, nested, with the failure's text; malformed and oversized requests get
// 400 and 413, counted on screen.
func TestViewPythonJSONSender(t *testing.T) {
	py := testutil.RequireTool(t, "python3", "scripts/install-tools.sh installs it")
	srv, out := startView(t, "--max-request-bytes", "65536")
	res, err := exec.Command(py, "-c", pythonSender, "http://"+srv.HTTPAddr()).CombinedOutput()
	if err != nil {
		t.Fatalf("sender: %v\n%s", err, res)
	}
	want := "logs 200\nchild 200\nroot 200\nmalformed 400\nbadid 400\noversized 413\n"
	if string(res) != want {
		t.Errorf("the sender got\n%s\nwant\n%s", res, want)
	}
	s := waitOutput(t, out,
		`deploy/StepStarted`,
		`span "copy files" failed 1.5s trace=0af76519 span=00f067aa parent=b7ad6b71: "disk full"`,
		`span "py deploy" ok 1.5s trace=0af76519 span=b7ad6b71\n`,
		// The tree's end: the failure's path in the tree, under the root span's name.
		`✗ py deploy finished with failures: 1 failure\n  ✗ copy files  failed\n      disk full`,
	)
	if got := srv.Rejected(); got["malformed (400)"] != 2 || got["too large (413)"] != 1 {
		t.Errorf("counted %v", got)
	}
	// On screen: the first rejection at once, the rest within the next notice or at the end.
	waitOutput(t, out, `progressotel view: [12] malformed \(400\)`)
	t.Log(s)
}

// TestViewNonLoopback: listening elsewhere than loopback takes --allow-remote.
func TestViewNonLoopback(t *testing.T) {
	var out testutil.SyncBuffer
	st := Main(context.Background(), []string{"view", "--http", "0.0.0.0:0", "--grpc", ""}, nil, &out, &out)
	if st.Code != ExitUsage || !strings.Contains(out.String(), "--allow-remote") {
		t.Fatalf("status %v:\n%s", st, out.String())
	}
}

// otelCLI is the real otel-cli built into the repository's bin/ (make otel-cli).
func otelCLI(t *testing.T) string {
	bin := os.Getenv("OTEL_CLI_BIN")
	if bin == "" {
		bin = filepath.Join(testutil.RepoRoot(t), "bin", "otel-cli")
	}
	return testutil.RequireTool(t, bin, "make otel-cli builds it")
}

// TestViewOtelCLI: the real otel-cli sends its spans over gRPC and OTLP/HTTP; the inner span, sent
// first, nests under the outer one.
func TestViewOtelCLI(t *testing.T) {
	bin := otelCLI(t)
	srv, out := startView(t)
	cmd := exec.Command(bin, "exec", "--service", "cli", "--name", "outer", "--", bin, "span", "--service", "cli", "--name", "inner")
	cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT="+srv.GRPCAddr(), "OTEL_EXPORTER_OTLP_INSECURE=true",
		"OTEL_EXPORTER_OTLP_PROTOCOL=grpc")
	if res, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("otel-cli: %v\n%s", err, res)
	}
	s := waitOutput(t, out, `span "inner" ok \S+ trace=(\w+) span=\w+ parent=(\w+)`, `span "outer" ok`)
	m := regexp.MustCompile(`span "inner" ok \S+ trace=(\w+) span=\w+ parent=(\w+)`).FindStringSubmatch(s)
	outer := regexp.MustCompile(`span "outer" ok \S+ trace=(\w+) span=(\w+)`).FindStringSubmatch(s)
	if outer == nil || m[1] != outer[1] || m[2] != outer[2] {
		t.Errorf("inner %q does not nest under outer %q:\n%s", m, outer, s)
	}
	// Over http/protobuf too.
	cmd = exec.Command(bin, "span", "--service", "cli", "--name", "over http", "--endpoint", "http://"+srv.HTTPAddr(), "--protocol", "http/protobuf")
	if res, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("otel-cli: %v\n%s", err, res)
	}
	waitOutput(t, out, `span "over http" ok`)
}

// TestViewTofu: the real OpenTofu, with TRACEPARENT from otel-cli exec (the driver) and
// OTEL_TRACES_EXPORTER=otlp pointed at the view, sends its own spans there: they arrive in the
// driver's trace, before the driver's span, and nest under it.
func TestViewTofu(t *testing.T) {
	tofu := testutil.Tofu(t)
	cli := otelCLI(t)
	srv, out := startView(t)
	dir := t.TempDir()
	tf := `resource "terraform_data" "a" {}
resource "terraform_data" "b" { input = terraform_data.a.id }
`
	cfg := filepath.Join(dir, "empty.tfrc")
	for name, body := range map[string]string{"main.tf": tf, "empty.tfrc": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+cfg, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1",
		"HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9") // no network: loopback is never proxied
	run := func(env []string, args ...string) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = dir, env
		if res, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", args, err, res)
		}
	}
	run(env, tofu, "init", "-input=false")
	run(append(env, "OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+srv.HTTPAddr(),
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"),
		cli, "exec", "--service", "driver", "--name", "driver apply", "--", tofu, "apply", "-auto-approve", "-input=false")
	s := waitOutput(t, out, `span "driver apply" ok \S+ trace=(\w+) span=(\w+)\n`)
	d := regexp.MustCompile(`span "driver apply" ok \S+ trace=(\w+) span=(\w+)\n`).FindStringSubmatch(s)
	lines := regexp.MustCompile(`span "([^"]+)" (\w+) \S+ trace=(\w+) span=(\w+)(?: parent=(\w+))?`).FindAllStringSubmatch(s, -1)
	ids := map[string]bool{d[2]: true}
	var tool []string
	for _, l := range lines {
		if l[3] == d[1] && l[4] != d[2] {
			tool = append(tool, l[1])
			ids[l[4]] = true
		}
	}
	if len(tool) < 2 {
		t.Fatalf("%d spans of tofu's in the driver's trace:\n%s", len(tool), s)
	}
	under := 0
	for _, l := range lines {
		if l[3] != d[1] || l[4] == d[2] {
			continue
		}
		if !ids[l[5]] {
			t.Errorf("tofu's span %q has parent %q, not in the trace", l[1], l[5])
		}
		if l[5] == d[2] {
			under++
		}
	}
	if under == 0 {
		t.Errorf("no span of tofu's directly under the driver's:\n%s", s)
	}
	t.Logf("tofu's spans: %q", tool)
}
