package docscheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
)

// TestRepositoryPassesCheck is make lint's repocheck as a test: the
// tracked files of this checkout pass every check.
func TestRepositoryPassesCheck(t *testing.T) {
	root := testutil.RepoRoot(t)
	files, err := TrackedFiles(root)
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	if !slices.Contains(files, "README.md") || len(files) < 100 {
		t.Fatalf("tracked files: %d, README.md missing: the listing is wrong", len(files))
	}
	for _, p := range Check(root, files) {
		t.Error(p)
	}
}

// fixture writes files under a new directory and returns it with their
// names.
func fixture(t *testing.T, files map[string]string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	var names []string
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return dir, names
}

// messages returns each problem as "file:line: msg".
func messages(ps []Problem) []string {
	var s []string
	for _, p := range ps {
		s = append(s, p.String())
	}
	slices.Sort(s)
	return s
}

func wantProblems(t *testing.T, got []Problem, want ...string) {
	t.Helper()
	g := messages(got)
	want = slices.Sorted(slices.Values(want))
	if len(g) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s", len(g), len(want), strings.Join(g, "\n"))
	}
	for i := range want {
		if !strings.Contains(g[i], want[i]) {
			t.Errorf("problem %d: %q, want it to contain %q", i, g[i], want[i])
		}
	}
}

// TestCheckFindsLargeFiles: a file over 1 MB fails, anywhere but under a
// testdata directory; exactly 1 MB passes.
func TestCheckFindsLargeFiles(t *testing.T) {
	big := strings.Repeat("x", MaxFileSize+1)
	root, files := fixture(t, map[string]string{
		"collector-config/otelcol/otelcol":   big,
		"ansible/testdata/streams/big.jsonl": big,
		"testdata/big":                       big,
		"exactly":                            strings.Repeat("x", MaxFileSize),
	})
	wantProblems(t, LargeFiles(root, files), "collector-config/otelcol/otelcol: 1048577 bytes")
	wantProblems(t, Check(root, files), "collector-config/otelcol/otelcol: 1048577 bytes")
}

// TestCheckFindsBrokenLinks: a relative link to a missing file, an anchor
// no heading makes (in another file or the same one), and one leaving the
// repository fail; links that resolve, external ones and links in code
// do not.
func TestCheckFindsBrokenLinks(t *testing.T) {
	root, files := fixture(t, map[string]string{
		"README.md": strings.Join([]string{
			"# Title",
			"See [the design](DESIGN.md#choices-and-the-alternatives-turned-down), [docs](docs/), [wire](docs/wire.md#the-record-format).",
			"Broken: [gone](docs/gone.md) and [anchor](DESIGN.md#no-such-heading) and [self](#nowhere).",
			"Fine: [self](#title), [web](https://example.com/x.md#y), ![img](docs/img.png), `[code](nowhere.md)`.",
			"```",
			"[in a block](nowhere.md)",
			"```",
			"[ref]: docs/missing.md",
			"Out: [up](../elsewhere.md).",
		}, "\n"),
		"DESIGN.md":     "# Design\n\n## Choices and the alternatives turned down\n\n### The `Record` API: what *it* does\n",
		"docs/wire.md":  "# The record format\n\n<a name=\"legacy\"></a>\n",
		"docs/img.png":  "png",
		"docs/guide.md": "[design](../DESIGN.md#the-record-api-what-it-does), [legacy](wire.md#legacy), [twice](#a-1)\n\n## A\n\n## A\n",
	})
	wantProblems(t, BrokenLinks(root, files),
		`README.md:3: link "docs/gone.md": docs/gone.md does not exist`,
		`README.md:3: link "DESIGN.md#no-such-heading": DESIGN.md has no heading with anchor #no-such-heading`,
		`README.md:3: link "#nowhere": README.md has no heading with anchor #nowhere`,
		`README.md:8: link "docs/missing.md": docs/missing.md does not exist`,
		`README.md:9: link "../elsewhere.md" leaves the repository`,
	)
}

// TestCheckFindsMissingTests: a Test, Fuzz, Benchmark or Example named in
// Markdown or in a Go comment must be declared by a _test.go file; a
// pattern after -run, or before a *, needs only a prefix; CHANGELOG.md
// is history, and an event type such as terraform/TestRun is no name.
func TestCheckFindsMissingTests(t *testing.T) {
	root, files := fixture(t, map[string]string{
		"progress/record_test.go": "package progress\n\nfunc TestRecordWireContract(t *testing.T) {}\n\nfunc FuzzParseType(f *testing.F) {}\n",
		"progress/validate.go":    "package progress\n\n// validType: FuzzRecordType checks that they agree.\nfunc validType() {}\n\nvar s = \"TestInAString\"\n",
		"docs/reliability.md":     "Proven by `TestRecordWireContract` and `BenchmarkGone`.\n\n`go test -run TestRecordWire ./progress`, the TestRecord* tests; `terraform/TestRun`.\n",
		"CHANGELOG.md":            "- removed TestOld\n",
	})
	wantProblems(t, MissingTests(root, files),
		"docs/reliability.md:1: names BenchmarkGone",
		"progress/validate.go:3: names FuzzRecordType",
	)
}
