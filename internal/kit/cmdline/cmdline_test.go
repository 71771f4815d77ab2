package cmdline

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestShellQuote: a POSIX shell (and so ansible-runner's args file, split
// like one) splits the quoted line back into the arguments, whatever they
// hold.
func TestShellQuote(t *testing.T) {
	args := []string{"ansible-playbook", "-e", `{"a": "it's $HOME"}`, "a b", `"double"`, "`date`", "", `back\slash`, "new\nline", "*"}
	out, err := exec.Command("sh", "-c", `for a in `+ShellQuote(args)+`; do printf '%s\0' "$a"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if !slices.Equal(got, args) {
		t.Errorf("got %q, want %q", got, args)
	}
}

func TestHasFlag(t *testing.T) {
	args := []string{"-json", "--auto-approve", "-var-file=x", "--target=a.b", "plan-file"}
	for name, want := range map[string]bool{
		"json": true, "auto-approve": true, "var-file": true, "target": true,
		"var": false, "input": false, "jso": false,
	} {
		if got := HasFlag(args, name); got != want {
			t.Errorf("HasFlag(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestSplitSubcommand(t *testing.T) {
	global, sub, rest, ok := SplitSubcommand([]string{"-chdir=x", "apply", "-auto-approve", "plan"})
	if !ok || !slices.Equal(global, []string{"-chdir=x"}) || sub != "apply" || !slices.Equal(rest, []string{"-auto-approve", "plan"}) {
		t.Errorf("got %q %q %q %v", global, sub, rest, ok)
	}
	if global, sub, rest, ok := SplitSubcommand([]string{"-version"}); ok || sub != "" || rest != nil || !slices.Equal(global, []string{"-version"}) {
		t.Errorf("no subcommand: got %q %q %q %v", global, sub, rest, ok)
	}
}
