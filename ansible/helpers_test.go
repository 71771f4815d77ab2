package ansible

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/progress/progresstest"
)

// projectDir holds the playbooks of the real-run tests.
const projectDir = "testdata/project"

// requireAnsible skips a test that needs the real Ansible (and the more
// tools named) when it is not installed, except in CI (CI=true), where a
// missing Ansible is a failure (see testutil.RequireTool).
func requireAnsible(t testing.TB, more ...string) {
	t.Helper()
	for _, tool := range append([]string{"ansible-runner", "ansible-playbook"}, more...) {
		testutil.RequireTool(t, tool, "apt-get install --no-install-recommends ansible-core python3-ansible-runner")
	}
}

// capture records events on the real SDK and spans in a span recorder.
type capture struct {
	sink  *progresstest.Sink
	spans *tracetest.SpanRecorder
	tp    *sdktrace.TracerProvider
}

func newCapture(t testing.TB) *capture {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	return &capture{sink: progresstest.NewSink(), spans: sr, tp: tp}
}

func (c *capture) options(t testing.TB) []Option {
	return []Option{
		WithRecorder(c.sink.Recorder()),
		WithTracerProvider(c.tp),
		WithLogger(testLogger(t)),
	}
}

// testLogger sends the adapter's warnings to the test log.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, nil))
}

// testWriter sends the adapter's warnings to the test log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

var _ io.Writer = testWriter{}

// inventory writes the test inventory: two web hosts and a load balancer
// on the local connection, an empty databases group (a play that matches
// no hosts) and an edge proxy on a loopback port that nothing listens on.
func inventory(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // now closed: ssh gets "connection refused" at once
	local := "ansible_connection=local ansible_python_interpreter=/usr/bin/python3"
	text := fmt.Sprintf(`[web]
web-1 %[1]s
web-2 %[1]s

[databases]

[lb]
lb-1 %[1]s

[edge]
edge-proxy ansible_host=127.0.0.1 ansible_port=%[2]d ansible_connection=ssh ansible_ssh_common_args='-o ConnectTimeout=5 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'
`, local, port)
	path := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// assertNoProcess fails if any process of a run is still there:
// ansible-playbook runs with the test's own inventory path on its command
// line, and marker (when set) is on the command line of the task's process.
func assertNoProcess(t testing.TB, inventory, marker string) {
	t.Helper()
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc: cannot look for leftover processes")
	}
	left := testutil.ProcessesWith(inventory)
	if marker != "" {
		left = append(left, testutil.ProcessesWith(marker)...)
	}
	if len(left) > 0 {
		t.Errorf("processes left behind:\n%s", strings.Join(left, "\n"))
	}
}
