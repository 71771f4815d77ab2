package docscheck

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
)

// TestQuickStartBuildsInANewModule builds the README's Quick Start
// unchanged in a new module outside the repository (a replace points to
// this checkout), runs it with JSON lines and finds the envelope it sets
// once on every record. Offline: the module cache already holds what the
// root module needs.
func TestQuickStartBuildsInANewModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	root := testutil.RepoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	src := quickStart(t, string(readme))
	dir := t.TempDir()
	gomod := "module quickstart\n\ngo 1.26\n\nrequire github.com/progressotel/progressotel v0.0.0\n\nreplace github.com/progressotel/progressotel => " + root + "\n" +
		"replace github.com/progressotel/progressotel/tncomessage => " + filepath.Join(root, "tncomessage") + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"main.go": []byte(src), "go.mod": []byte(gomod), "go.sum": sum} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := exec.Command("go", "build", "-o", "quickstart", ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the Quick Start does not build in a new module: %v\n%s", err, out)
	}
	run := exec.Command(filepath.Join(dir, "quickstart"))
	run.Env = append(os.Environ(), "OTEL_LOGS_EXPORTER=json")
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("quickstart: %v\n%s", err, stderr.String())
	}
	if stdout.Len() > 0 {
		t.Errorf("telemetry in stdout: %q", stdout.String())
	}
	n := 0
	for line := range strings.Lines(stderr.String()) {
		var rec struct {
			ProgressEventType string            `json:"progressEventType"`
			Component         map[string]string `json:"component"`
			Resource          map[string]string `json:"resource"`
			Tenant            string            `json:"tenant"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not a JSON line: %q: %v", line, err)
		}
		n++
		if rec.Component["name"] != "my-driver" || rec.Resource["type"] != "Network" || rec.Resource["id"] != "net-1" || rec.Tenant != "acme" {
			t.Errorf("%s without the Quick Start's envelope: %+v", rec.ProgressEventType, rec)
		}
	}
	if n != 4 {
		t.Errorf("got %d records, want the Quick Start's 4:\n%s", n, stderr.String())
	}
}

// quickStart returns the first Go block under the README's "## Quick start".
func quickStart(t *testing.T, readme string) string {
	_, after, ok := strings.Cut(readme, "\n## Quick start\n")
	if !ok {
		t.Fatal(`README.md has no "## Quick start"`)
	}
	_, after, ok = strings.Cut(after, "```go\n")
	if !ok {
		t.Fatal("the Quick Start has no Go block")
	}
	src, _, ok := strings.Cut(after, "\n```")
	if !ok {
		t.Fatal("the Quick Start's Go block is not closed")
	}
	return src + "\n"
}
