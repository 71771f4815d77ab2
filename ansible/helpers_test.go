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

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/internal/base/outcome"
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
		adapter.WithRecorder(c.sink.Recorder()),
		adapter.WithTracerProvider(c.tp),
		adapter.WithLogger(testLogger(t)),
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

// recapTruth is what Ansible's recap says of a run, for
// progresstest.CheckRun: the run's outcome and, per host, its failures,
// unreachable, rescued and ignored counts. A run without a recap has none.
func recapTruth(res Result) progresstest.Truth {
	if res.Stats == nil || res.StatsRebuilt {
		return progresstest.Truth{}
	}
	truth := progresstest.Truth{Key: "ansible.host.name", Counts: map[string]map[string]int{}}
	var seen []string
	failed := res.ExitCode > 0
	for host, s := range res.Stats {
		truth.Counts[host] = map[string]int{outcome.Failed: s.Failures, outcome.Unreachable: s.Unreachable,
			outcome.Rescued: s.Rescued, outcome.Ignored: s.Ignored}
		failed = failed || s.Failures > 0 || s.Unreachable > 0
		for how, n := range map[string]int{outcome.Rescued: s.Rescued, outcome.Ignored: s.Ignored, outcome.Changed: s.Changed} {
			if n > 0 {
				seen = append(seen, how)
			}
		}
	}
	truth.Outcome = outcome.Of("", seen...)
	if failed {
		truth.Outcome = outcome.Failed
	}
	return truth
}

// checkRun checks the property every real run holds (progresstest.CheckRun)
// against Ansible's recap.
func checkRun(t testing.TB, c *capture, res Result) {
	t.Helper()
	if started, ended := len(c.spans.Started()), len(c.spans.Ended()); started != ended {
		t.Errorf("%d spans started, %d ended", started, ended)
	}
	progresstest.CheckRun(t, c.spans.Ended(), c.sink.Events(), recapTruth(res))
}
