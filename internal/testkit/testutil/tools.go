package testutil

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

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
		if f, err := os.Open(filepath.Join(dir, "go.mod")); err == nil {
			sc := bufio.NewScanner(f)
			first := sc.Scan() && sc.Text() == rootModule
			f.Close()
			if first {
				return dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod of %q above the working directory", rootModule)
		}
		dir = parent
	}
}
