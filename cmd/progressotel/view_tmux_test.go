package main_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/internal/testkit/tmuxtest"
)

// TestViewRunTofuInTmux: progressotel view on a real terminal (a tmux pane) draws what
// `progressotel run -- tofu apply` sends it over OTLP: the run's records and spans and OpenTofu's
// own spans, one tree whose header is the run's operation, finished with nothing left running.
func TestViewRunTofuInTmux(t *testing.T) {
	testutil.RequireTool(t, "python3", "scripts/install-tools.sh installs it") // waits for the port
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := tofuConfig(t, "")
	status := filepath.Join(t.TempDir(), "status") // the run's; the pane's lines are the view's
	po := filepath.Join(binDir, "progressotel")
	var env []string
	for _, kv := range tofuEnv(t, tofuDir(t)) {
		env = append(env, "'"+kv+"'")
	}
	_, port, _ := net.SplitHostPort(addr)
	wait := fmt.Sprintf(`until python3 -c 'import socket; socket.create_connection(("127.0.0.1", %s), 1)' 2>/dev/null; do sleep 0.1; done`, port)
	script := fmt.Sprintf(`%[1]s view --http %[2]s --grpc '' & v=$!; %[6]s; `+
		`env %[3]s OTEL_LOGS_EXPORTER=otlp OTEL_EXPORTER_OTLP_ENDPOINT=http://%[2]s %[1]s run --operation Install -- tofu -chdir=%[4]s apply -auto-approve >/dev/null 2>&1; `+
		`echo $? > %[5]s; sleep 2; kill $v; wait $v`, po, addr, strings.Join(env, " "), cfg, status, wait)
	pane := tmuxtest.Start(t, t.TempDir(), 110, 30, script)
	last := pane.Wait(2*time.Minute, func([]string) {})
	if status, _ := tmuxtest.Exited(last); status != 0 {
		t.Fatalf("exit %d:\n%s", status, tmuxtest.Dump(last))
	}
	history := pane.History()
	all := strings.Join(history, "\n")
	if b, _ := os.ReadFile(status); string(b) != "0\n" {
		t.Errorf("the run's status %q", b)
	}
	for _, want := range []string{"listening on http://" + addr, "✓ Install", "Apply phase"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in the pane:\n%s", want, all)
		}
	}
	// The tree as the run's own live view draws it: OpenTofu's spans under the tofu span (its
	// root) under the run's tofu apply span, each line above under its parents' names.
	// (The first header names the operation once its common/OperationStarted has arrived: records
	// and spans come in separate batches.)
	want := []string{"  tofu apply", "    tofu", "      ✓ Apply phase", "  ✓ tofu apply  3 changed · 1 ok", "✓ Install  trace "}
	i := 0
	for _, l := range history {
		if i < len(want) && strings.HasPrefix(l, want[i]) {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("no line starting %q in order in the pane:\n%s", want[i], all)
	}
	if regexp.MustCompile(`\d{3,}h|\d{4,}m`).MatchString(all) || regexp.MustCompile(`(?m)^▸? *trace `).MatchString(all) {
		t.Errorf("a header without a name or with an absurd time in the pane:\n%s", all)
	}
	if strings.Contains(all, "span ") {
		t.Errorf("a row named by its span id in the pane:\n%s", all)
	}
	checkFinished(t, history, "✓ Install")
}
