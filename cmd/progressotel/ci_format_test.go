package main_test

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/progressotel/progressotel/internal/testkit/cisyntax"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
)

var updateCI = flag.Bool("update", false, "rewrite testdata/ci-*.golden from a real run")

// ciNestedScript is a shell driver's deploy: an emit, a nested run that
// fails (exit 3) and one that succeeds; the script itself goes on and
// ends with 0.
const ciNestedScript = `progressotel emit --type deploy/Checked
progressotel run --operation migrate -- sh -c 'echo creating tables; exit 3'
progressotel run --operation smoke -- sh -c 'echo all good'
`

// ciNestedRun runs progressotel run --operation Deploy -- sh script.sh
// with OTEL_LOGS_EXPORTER=ci, stderr a pipe (not a terminal) and the given
// CI's variables, none of the caller's CI variables, and returns its
// stderr and the step summary GitHub's GITHUB_STEP_SUMMARY received.
func ciNestedRun(t *testing.T, ci ...string) (stderr, summary string) {
	t.Helper()
	summaryFile := filepath.Join(t.TempDir(), "summary.md")
	env := []string{}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GITHUB_") || strings.HasPrefix(name, "GITLAB_") || name == "CI" || name == "NO_COLOR" ||
			name == "PROGRESSOTEL_OUTPUT" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "OTEL_LOGS_EXPORTER=ci", "NO_COLOR=1", "GITHUB_STEP_SUMMARY="+summaryFile)
	cmd := exec.Command(filepath.Join(binDir, "progressotel"), "run", "--operation", "Deploy", "--", "sh", script(t, ciNestedScript))
	cmd.Env = append(env, ci...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, errOut.String())
	}
	if out.String() != "creating tables\nall good\n" {
		t.Errorf("the commands' stdout %q, want theirs unchanged", out.String())
	}
	b, _ := os.ReadFile(summaryFile)
	return errOut.String(), string(b)
}

var ciNormal = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`trace [0-9a-f]{8}\b`), "trace <trace>"},
	{regexp.MustCompile(`(section_(?:start|end)):[0-9]+:`), "$1:<unix>:"},
	{regexp.MustCompile(`durationMs=[0-9]+`), "durationMs=<ms>"},
	{regexp.MustCompile(`\b(?:[0-9]+h)?(?:[0-9]+m)?[0-9]+(?:\.[0-9]+)?(?:ms|s)\b`), "<dur>"},
}

// normaliseCI replaces what differs from run to run: trace ids, section
// times, durations.
func normaliseCI(s string) string {
	for _, n := range ciNormal {
		s = n.re.ReplaceAllString(s, n.with)
	}
	return s
}

func compareCIGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateCI {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("%s differs (go test -run %s -update rewrites it):\n%s", path, t.Name(), testutil.DiffLines(string(want), got))
	}
}

// countLines counts the lines equal to l.
func countLines(lines []string, l string) (n int) {
	for _, x := range lines {
		if x == l {
			n++
		}
	}
	return n
}

// TestCIFormatNestedRun: the CI format of a real nested CLI run (a shell
// driver's deploy whose script emits, runs a step that fails and one that
// succeeds), the real binary with stderr a pipe: goldens, checked by each
// CI's documented syntax (internal/testkit/cisyntax). On GitHub the nested
// failure is outside any group with one ::error whose title holds its
// path, the successful step in a group, each record printed once, and
// GITHUB_STEP_SUMMARY gets the Markdown summary with the failure; on
// GitLab the failed step's section is nested under the operation's and
// open, the successful one collapsed.
func TestCIFormatNestedRun(t *testing.T) {
	const (
		migrateStarted = "INF common/OperationStarted  operation=migrate"
		migrateFailed  = `ERR common/OperationFailed  description="sh exited with status 3" failureCode=INTERNAL_ERROR operation=migrate`
		emitted        = "INF deploy/Checked"
	)
	t.Run("github", func(t *testing.T) {
		out, summary := ciNestedRun(t, "GITHUB_ACTIONS=true")
		compareCIGolden(t, "ci-github-nested-run.golden", normaliseCI(out))
		compareCIGolden(t, "ci-github-nested-run-summary.golden", normaliseCI(summary))
		groups, outside, notes := cisyntax.GitHub(t, out)
		lines := strings.Split(out, "\n")
		for _, l := range []string{migrateStarted, migrateFailed, emitted} {
			if n := countLines(lines, l); n != 1 {
				t.Errorf("%q printed %d times, want once", l, n)
			}
		}
		for _, g := range groups {
			if strings.Contains(g, "migrate") || strings.HasPrefix(g, "✗") {
				t.Errorf("the failure in a group: %q", g)
			}
		}
		if countLines(outside, migrateFailed) != 1 || countLines(outside, migrateStarted) != 1 {
			t.Errorf("the failed step's lines not outside the groups:\n%s", out)
		}
		failedRow := false
		for _, l := range outside {
			failedRow = failedRow || strings.HasPrefix(l, "✗ ") && strings.Contains(l, "› migrate  failed")
		}
		if !failedRow {
			t.Errorf("no ✗ row of the failed step outside the groups:\n%s", out)
		}
		smoke := false
		for _, g := range groups {
			smoke = smoke || strings.HasPrefix(g, "✓ ") && strings.Contains(g, "› smoke")
		}
		if !smoke {
			t.Errorf("groups %q, want one of the successful step", groups)
		}
		want := []cisyntax.Annotation{{Title: "Deploy › migrate", Message: "INTERNAL_ERROR: sh exited with status 3"}}
		if !slices.Equal(notes, want) {
			t.Errorf("annotations %q, want one of the failed step, titled by its path (the operation's name once)", notes)
		}
		if !strings.HasPrefix(summary, "### ") || !strings.Contains(summary, "| Failed | Status | Message |") ||
			!strings.Contains(summary, "| Deploy › migrate | failed | INTERNAL\\_ERROR: sh exited with status 3 |") {
			t.Errorf("step summary:\n%s", summary)
		}
	})
	t.Run("gitlab", func(t *testing.T) {
		out, summary := ciNestedRun(t, "GITLAB_CI=true")
		compareCIGolden(t, "ci-gitlab-nested-run.golden", normaliseCI(out))
		if summary != "" {
			t.Errorf("a GitHub step summary under GitLab: %q", summary)
		}
		sections, outside := cisyntax.GitLab(t, out)
		if len(outside) > 0 {
			t.Errorf("lines outside the operation's section: %q", outside)
		}
		var migrate, smoke *cisyntax.Section
		for _, s := range sections {
			switch {
			case strings.Contains(s.Header, "migrate"):
				migrate = s
			case strings.Contains(s.Header, "smoke"):
				smoke = s
			}
			for _, l := range s.Lines {
				if s.Collapsed && strings.HasPrefix(l, "ERR ") {
					t.Errorf("an ERR line in a collapsed section %q: %q", s.Header, l)
				}
			}
		}
		if migrate == nil || smoke == nil {
			t.Fatalf("no section of each nested step:\n%s", out)
		}
		if migrate.Collapsed || !strings.HasPrefix(migrate.Header, "✗ ") || countLines(migrate.Lines, migrateFailed) != 1 {
			t.Errorf("the failed step's section %+v, want open, with its failure", migrate)
		}
		if !smoke.Collapsed || !strings.HasPrefix(smoke.Header, "✓ ") {
			t.Errorf("the successful step's section %+v, want collapsed", smoke)
		}
		if migrate.Parent == nil || migrate.Parent.Collapsed || migrate.Parent != smoke.Parent {
			t.Errorf("the steps' sections not nested, side by side, in an open section: %+v %+v", migrate, smoke)
		}
		if n := countLines(strings.Split(out, "\n"), emitted); n != 1 {
			t.Errorf("%q printed %d times, want once", emitted, n)
		}
	})
}
