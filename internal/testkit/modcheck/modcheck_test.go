package modcheck

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
)

// TestNoModuleImportsAnothersInternal lists every package of each module
// of the repository with its tests (go list -deps -test) and fails on an
// import of a package under another module's internal/.
func TestNoModuleImportsAnothersInternal(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: go list over every module")
	}
	root := testutil.RepoRoot(t)
	mods := modules(t, root)
	if len(mods) < 2 {
		t.Fatalf("found modules %v: the walk is broken", mods)
	}
	for _, dir := range mods {
		t.Run(strings.TrimPrefix(dir, root), func(t *testing.T) {
			for _, v := range violations(t, dir) {
				t.Error(v)
			}
		})
	}
}

// TestViolationsSeesAnImport: the check finds an import of another
// module's internal/ in a module made for the test, so that it cannot pass
// by seeing nothing.
func TestViolationsSeesAnImport(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: go list")
	}
	root := testutil.RepoRoot(t)
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module github.com/progressotel/progressotel/leaky\n\ngo 1.26\n\n"+
		"require github.com/progressotel/progressotel v0.0.0\n\nreplace github.com/progressotel/progressotel => "+root+"\n")
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write("go.sum", string(sum))
	write("leaky.go", "package leaky\n\nimport _ \"github.com/progressotel/progressotel/internal/base/outcome\"\n")
	got := violations(t, dir, "-mod=mod") // a module of the test's own: tidied on the fly
	if len(got) != 1 || !strings.Contains(got[0], "internal/base/outcome") {
		t.Errorf("violations %q, want the one import of internal/base/outcome", got)
	}
}

// modules returns the directories of the repository's go.mod files.
func modules(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if d.Name() == "go.mod" {
			dirs = append(dirs, filepath.Dir(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// testOnly are the modules that hold tests only and are never published:
// their tests may use the main module's test kit (test PKI, the redaction
// corpus), which they run against the driver's real code.
var testOnly = map[string]bool{
	"github.com/progressotel/progressotel/collector-config/e2e": true,
	"github.com/progressotel/progressotel/bench/e2e":            true,
}

const testkit = "github.com/progressotel/progressotel/internal/testkit/"

// violations lists the imports, by the packages of the module in dir, of
// a package under another module's internal/.
func violations(t *testing.T, dir string, flags ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append(append([]string{"list"}, flags...), "-e", "-deps", "-test",
		"-f", "{{.ImportPath}}\t{{with .Module}}{{.Path}}{{end}}\t{{join .Imports \",\"}}", "./...")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v\n%s", dir, err, stderr.String())
	}
	self, err := exec.Command("go", "-C", dir, "list", "-m").Output()
	if err != nil {
		t.Fatalf("go list -m in %s: %v", dir, err)
	}
	mod := strings.TrimSpace(string(self))
	owner := map[string]string{} // package → its module
	type pkg struct{ path, imports string }
	var own []pkg
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), "\t", 3)
		if len(f) != 3 {
			continue
		}
		path, _, _ := strings.Cut(f[0], " ") // "p [p.test]"
		owner[path] = f[1]
		if f[1] == mod {
			own = append(own, pkg{f[0], f[2]})
		}
	}
	var bad []string
	for _, p := range own {
		for _, imp := range strings.Split(p.imports, ",") {
			imp, _, _ = strings.Cut(imp, " ") // "q [p.test]"
			if (strings.Contains(imp, "/internal/") || strings.HasSuffix(imp, "/internal")) && owner[imp] != mod && owner[imp] != "" &&
				!(testOnly[mod] && strings.Contains(p.path, ".test]") && strings.HasPrefix(imp, testkit)) {
				bad = append(bad, p.path+" imports "+imp+", under module "+owner[imp]+"'s internal/")
			}
		}
	}
	return bad
}
