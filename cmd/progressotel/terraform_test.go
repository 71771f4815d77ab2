package main_test

import (
	"bytes"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/progressotel/progressotel/internal/testkit/otlptest"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
)

// tofuDir returns the directory of the OpenTofu binary (see
// testutil.Tofu).
func tofuDir(t *testing.T) string {
	t.Helper()
	return filepath.Dir(testutil.Tofu(t))
}

// tofuConfig writes a configuration of terraform_data resources (no
// provider, no network) to a fresh directory; its provisioner emits an
// event from inside the tool.
func tofuConfig(t *testing.T, extra string) string {
	t.Helper()
	dir := t.TempDir()
	tf := `
resource "terraform_data" "network" {
  input = "10.0.0.0/16"
  provisioner "local-exec" {
    command = "echo network ready; progressotel emit --type infra/NetworkReady --detail cidr=10.0.0.0/16"
  }
}
resource "terraform_data" "web" {
  count      = 2
  input      = "web-${count.index}"
  depends_on = [terraform_data.network]
}
` + extra
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(tf), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// tofuEnv keeps the tool off the network and puts it on PATH.
func tofuEnv(t *testing.T, dir string) []string {
	cfg := filepath.Join(t.TempDir(), "empty.tfrc")
	if err := os.WriteFile(cfg, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{
		"PATH=" + pathDir + string(os.PathListSeparator) + dir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"TF_CLI_CONFIG_FILE=" + cfg, "CHECKPOINT_DISABLE=1",
		"HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "NO_PROXY=",
		"X_TRACECTX_TRANSACTIONID=tx-tofu",
	}
}

// run -- tofu apply: the adapter's events, live, in the run's trace, the
// provisioner's emit among them, one contiguous sequence; the tool's
// messages on stdout; its status.
func TestRunTofuApply(t *testing.T) {
	env := tofuEnv(t, tofuDir(t))
	cfg := tofuConfig(t, "")
	r := runPO(t, env, "run", "--operation", "Install", "--resource-type", "stack", "--resource-id", "s1", "--",
		"tofu", "-chdir="+cfg, "apply", "-auto-approve")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	got := types(r.records)
	for _, want := range []string{"common/OperationStarted", "terraform/Version", "terraform/PlannedChange", "terraform/ApplyStarted",
		"terraform/ProvisionOutput", "infra/NetworkReady", "terraform/ApplyCompleted", "common/Progress", "common/OperationCompleted"} {
		if !slices.Contains(got, want) {
			t.Errorf("no %s among %v", want, got)
		}
	}
	if got[0] != "common/OperationStarted" || got[len(got)-1] != "common/OperationCompleted" {
		t.Errorf("not framed by the operation events: %v", got)
	}
	trace := r.records[0].str("traceId")
	for i, rec := range r.records {
		if rec.str("traceId") != trace || rec.str("tracectx.transactionid") != "tx-tofu" || rec.seq() != int64(i+1) {
			t.Fatalf("record %d (%s): trace %s tx %q sequence %d", i, rec.str("message"), rec.str("traceId"), rec.str("tracectx.transactionid"), rec.seq())
		}
	}
	if d := r.records[0].details(); d["operation"] != "Install" {
		t.Errorf("operation %v", d)
	}
	if !strings.Contains(r.stdout, "Apply complete! Resources: 3 added") || strings.Contains(r.stdout, `"@message"`) {
		t.Errorf("stdout is not the tool's messages: %s", r.stdout)
	}

	// With -json given, the user gets the JSON itself.
	r = runPO(t, env, "run", "--", "tofu", "-chdir="+cfg, "plan", "-json")
	if r.code != 0 || !strings.Contains(r.stdout, `"type":"version"`) {
		t.Fatalf("plan -json: exit %d stdout %s", r.code, r.stdout)
	}
}

// A failing apply: the tool's own status, never remapped; the adapter
// reports the failure with the tool's diagnostics.
func TestRunTofuApplyFailing(t *testing.T) {
	env := tofuEnv(t, tofuDir(t))
	cfg := tofuConfig(t, `
resource "terraform_data" "broken" {
  input = "x"
  provisioner "local-exec" {
    command = "echo failing; exit 3"
  }
}
`)
	r := runPO(t, env, "run", "--", "tofu", "-chdir="+cfg, "apply", "-auto-approve")
	want := exec.Command(filepath.Join(tofuDir(t), "tofu"), "-chdir="+cfg, "apply", "-auto-approve", "-json")
	want.Env = append(os.Environ(), env...)
	_ = want.Run()
	if r.code != want.ProcessState.ExitCode() || r.code == 0 {
		t.Fatalf("exit %d, the tool's own is %d\n%s", r.code, want.ProcessState.ExitCode(), r.stderr)
	}
	last := r.records[len(r.records)-1]
	if last.str("message") != "common/OperationFailed" || last.details()["failureCode"] != "INFRASTRUCTURE_ERROR" {
		t.Fatalf("last record %v", last)
	}
}

// An apply that would prompt for approval cannot run with -json: it runs
// as a plain command, with a warning, and its status is the tool's.
func TestRunTofuApplyThatPrompts(t *testing.T) {
	env := tofuEnv(t, tofuDir(t))
	cfg := tofuConfig(t, "")
	r := runPO(t, env, "run", "--", "tofu", "-chdir="+cfg, "apply")
	if !strings.Contains(r.stderr, "add -auto-approve") {
		t.Fatalf("no warning: %s", r.stderr)
	}
	// No answer on stdin: the tool cancels the apply and exits 1.
	if r.code != 1 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if got := types(r.records); !slices.Equal(got, []string{"common/OperationStarted", "common/OperationFailed"}) {
		t.Fatalf("records %v", got)
	}
}

// A tool whose stream ends without its own final message (tofu killed in
// the middle of an apply, here by its own provisioner) is a failed
// operation: progressotel passes the package's OperationFailed through and
// adds nothing of its own, and ends as the tool did.
func TestRunTofuStreamCutShort(t *testing.T) {
	env := tofuEnv(t, tofuDir(t))
	cfg := tofuConfig(t, `
resource "terraform_data" "killer" {
  input = "x"
  provisioner "local-exec" {
    command = "kill -KILL $PPID"
  }
}
`)
	r := runPO(t, env, "run", "--", "tofu", "-chdir="+cfg, "apply", "-auto-approve")
	if r.signal != syscall.SIGKILL {
		t.Fatalf("exit %d signal %v: want tofu's death by SIGKILL\n%s", r.code, r.signal, r.stderr)
	}
	got := types(r.records)
	if got[0] != "common/OperationStarted" || got[len(got)-1] != "common/OperationFailed" ||
		slices.Contains(got, "common/OperationCompleted") || strings.Count(strings.Join(got, " "), "common/OperationFailed") != 1 {
		t.Fatalf("records %v: want one OperationFailed at the end", got)
	}
}

// `progressotel run -- tofu apply` exporting over OTLP gives OpenTofu the
// run's context and the OTLP settings (terraform.RunCommandLine, as
// terraform.Run does): the tool's own spans land in the run's trace, under
// one of the run's spans.
func TestRunTofuSpansInTheRunsTrace(t *testing.T) {
	srv := otlptest.StartHTTP(t)
	env := append(tofuEnv(t, tofuDir(t)), "OTEL_LOGS_EXPORTER=", "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+srv.Addr)
	cfg := tofuConfig(t, "")
	r := runPO(t, env, "run", "--operation", "Install", "--", "tofu", "-chdir="+cfg, "apply", "-auto-approve")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	ours := map[string]bool{}
	var trace []byte
	var tools []otlptest.ReceivedSpan
	for _, s := range srv.ReceivedSpans() {
		if s.Service == "tofu" {
			tools = append(tools, s)
			continue
		}
		ours[hex.EncodeToString(s.Span.GetSpanId())] = true
		if len(s.Span.GetParentSpanId()) == 0 {
			trace = s.Span.GetTraceId()
		}
	}
	if len(tools) == 0 || trace == nil {
		t.Fatalf("%d spans of the tool's, root span of the run found: %v", len(tools), trace != nil)
	}
	under := 0
	for _, s := range tools {
		if !bytes.Equal(s.Span.GetTraceId(), trace) {
			t.Fatalf("tool span %q in trace %x, the run's is %x", s.Span.GetName(), s.Span.GetTraceId(), trace)
		}
		if ours[hex.EncodeToString(s.Span.GetParentSpanId())] {
			under++
		}
	}
	if under == 0 {
		t.Errorf("none of the tool's %d spans has one of the run's spans as its parent", len(tools))
	}
}

// tofu plan -detailed-exitcode with changes exits 2, which says "changes
// present": the status comes through, and the operation is completed, on
// the records and on the run's span (no Error status, no error.type), as
// the outcome table in docs/cli.md says.
func TestRunTofuPlanDetailedExitcode(t *testing.T) {
	srv := otlptest.StartHTTP(t)
	env := append(tofuEnv(t, tofuDir(t)), "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+srv.Addr, "OTEL_LOGS_EXPORTER=json,otlp")
	cfg := tofuConfig(t, "")
	r := runPO(t, env, "run", "--", "tofu", "-chdir="+cfg, "plan", "-detailed-exitcode")
	if r.code != 2 {
		t.Fatalf("exit %d, want 2\n%s", r.code, r.stderr)
	}
	if got := types(r.records); len(got) == 0 || got[len(got)-1] != "common/OperationCompleted" {
		t.Fatalf("records %v", got)
	}
	found := false
	for _, s := range srv.ReceivedSpans() {
		if s.Span.GetKind() != tracepb.Span_SPAN_KIND_CLIENT || s.Span.GetName() != "tofu" {
			continue
		}
		found = true
		if s.Span.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR {
			t.Errorf("the run's span is an error: %v", s.Span.GetStatus())
		}
		for _, kv := range s.Span.GetAttributes() {
			if kv.GetKey() == "error.type" {
				t.Errorf("error.type %v", kv.GetValue())
			}
			if kv.GetKey() == "process.exit.code" && kv.GetValue().GetIntValue() != 2 {
				t.Errorf("process.exit.code %v", kv.GetValue())
			}
		}
	}
	if !found {
		t.Fatal("no span of the run")
	}
}
