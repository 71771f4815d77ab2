// Package docscheck holds the tests of the repository's documentation: a
// claim that names the test behind it must name a test that exists.
package docscheck

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
)

// named is a Go test, fuzz target, benchmark or example named in prose.
var named = regexp.MustCompile(`\b(Test|Fuzz|Benchmark|Example)[A-Z][A-Za-z0-9_]*`)

// declared is a test function's declaration.
var declared = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark|Example)[A-Za-z0-9_]*)\(`)

// TestDocsNameTestsThatExist reads every Markdown file of the repository
// (CHANGELOG.md and BENCHMARKS.md too: their names are what a reader runs)
// and fails for each test, fuzz target, benchmark or example it names that
// no _test.go file of any module declares.
func TestDocsNameTestsThatExist(t *testing.T) {
	root := testutil.RepoRoot(t)
	tests := map[string]bool{}
	var docs []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "bin" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(path, "_test.go"):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range declared.FindAllSubmatch(b, -1) {
				tests[string(m[1])] = true
			}
		case strings.HasSuffix(path, ".md"):
			docs = append(docs, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) < 100 {
		t.Fatalf("found only %d tests: the walk is wrong", len(tests))
	}
	for _, doc := range docs {
		if filepath.Base(doc) == "CHANGELOG.md" {
			continue // history: it names what existed then
		}
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		var missing []string
		for _, loc := range named.FindAllIndex(b, -1) {
			name := string(b[loc[0]:loc[1]])
			if tests[name] || slices.Contains(missing, name) {
				continue
			}
			// After -run (or -bench) a name is a pattern: a prefix
			// of a test's name is enough.
			if before := string(b[max(0, loc[0]-12):loc[0]]); strings.Contains(before, "-run") || strings.Contains(before, "-bench") {
				if hasPrefix(tests, name) {
					continue
				}
			}
			missing = append(missing, name)
		}
		if len(missing) > 0 {
			rel, _ := filepath.Rel(root, doc)
			t.Errorf("%s names tests that no _test.go declares: %s", rel, strings.Join(missing, ", "))
		}
	}
}

func hasPrefix(tests map[string]bool, prefix string) bool {
	for name := range tests {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}
