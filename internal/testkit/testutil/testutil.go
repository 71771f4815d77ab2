// Package testutil holds helpers shared by this repository's tests.
package testutil

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// SyncBuffer is a bytes.Buffer that an exporter's goroutine writes while a
// test reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Bytes returns a copy of what was written so far.
func (s *SyncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}

// DiffLines shows where got differs from want, line by line: the first
// ten lines that differ, each as "line N:", then "- want" and "+ got",
// Go-quoted so that control characters and trailing spaces show. It is
// empty when they are equal.
func DiffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 10; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n- %q\n+ %q\n", i+1, wl, gl)
			shown++
		}
	}
	return b.String()
}

// JSONLines reads JSON lines from r (what the JSON exporter writes, the
// records a file exporter appends), lines of up to 1 MiB, and yields each
// line's text and its fields. A line that is not a JSON object, or a read
// error, fails the test.
func JSONLines(t testing.TB, r io.Reader) iter.Seq2[string, map[string]any] {
	return func(yield func(string, map[string]any) bool) {
		t.Helper()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var fields map[string]any
			if err := json.Unmarshal(sc.Bytes(), &fields); err != nil {
				t.Fatalf("not a JSON line: %q: %v", sc.Text(), err)
			}
			if !yield(sc.Text(), fields) {
				return
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("reading JSON lines: %v", err)
		}
	}
}

// Pipe returns an os.Pipe, closed at the end of the test: a reader whose
// Read blocks until something is written, and that has SetReadDeadline,
// as a tool's stdout has.
func Pipe(t testing.TB) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = r.Close()
		_ = w.Close()
	})
	return r, w
}

// ProcessesWith returns the running processes, other than this one, whose
// command line holds s, as "pid: command line", read from /proc: how a
// test finds what a run left behind. Zombies have no command line and are
// not listed. Without /proc it returns nil.
func ProcessesWith(s string) []string {
	entries, _ := os.ReadDir("/proc")
	var found []string
	self := strconv.Itoa(os.Getpid())
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil || e.Name() == self {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(b) == 0 {
			continue // gone meanwhile, or a zombie
		}
		cmd := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cmd, s) {
			found = append(found, e.Name()+": "+cmd)
		}
	}
	return found
}

// RequireTool returns the path of a real tool the test needs (a name
// looked up on PATH, or a path), and skips the test without it, except
// under CI=true: CI installs or builds every tool the tests need (.ci/run,
// make test), so a missing one there means the tests did not run, and the
// test fails. install says how to get it.
func RequireTool(t testing.TB, tool, install string) string {
	t.Helper()
	path, err := exec.LookPath(tool)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing, and CI=true requires it (%s): %v", tool, install, err)
		}
		t.Skipf("%s is missing (%s): %v", tool, install, err)
	}
	return path
}

// Tofu returns the OpenTofu binary that scripts/build-tofu.sh builds into
// the repository's bin/tofu (make tofu), or $TOFU_BIN; see RequireTool.
func Tofu(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("TOFU_BIN")
	if bin == "" {
		bin = filepath.Join(RepoRoot(t), "bin", "tofu")
	}
	path := RequireTool(t, bin, "make tofu builds it")
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// rootModule is the first line of the repository's root go.mod.
const rootModule = "module github.com/progressotel/progressotel"

// RepoRoot is the repository's root: the closest directory above the
// test's working directory (its package's) whose go.mod is the root
// module's, so that it is found from the nested modules too.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
		if first, _, _ := strings.Cut(string(b), "\n"); strings.TrimSuffix(first, "\r") == rootModule {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod of %q above the working directory", rootModule)
		}
		dir = parent
	}
}
