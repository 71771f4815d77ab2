package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
)

// bareRun is how a command ended when run without progressotel.
type bareRun struct {
	code           int
	stdout, stderr string
}

// runBare runs argv in dir with env added to the test's environment.
func runBare(t *testing.T, dir string, env []string, argv ...string) bareRun {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return bareRun{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// The Ansible corpus: each playbook run bare and through `progressotel
// run`, without a live view: the same stdout and stderr, byte for byte
// (colours, warnings on stderr, the last blank line, no task arguments
// the bare run does not print), and the same status; the adapter still
// reports the run, with the task arguments its events carry.
func TestAnsibleCorpusStreamsAreTheBareCommands(t *testing.T) {
	needTool(t, "ansible-playbook")
	needTool(t, "ansible-runner")
	dir, err := filepath.Abs(filepath.Join("testdata", "corpus", "ansible"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, playbook string
		args, env      []string
		check          func(t *testing.T, r result)
	}{
		{name: "ok", playbook: "01-ok.yml", check: func(t *testing.T, r result) {
			for _, rec := range r.records {
				if rec.str("message") == "ansible/TaskStarted" && rec.details()["taskName"] == "Say hello" {
					if args, _ := rec.details()["args"].(map[string]any); args["msg"] == "hello" {
						return
					}
				}
			}
			t.Errorf("no TaskStarted with the task's arguments among %v", types(r.records))
		}},
		{name: "verbose", playbook: "01-ok.yml", args: []string{"-v"}},
		{name: "forced colour", playbook: "01-ok.yml", env: []string{"ANSIBLE_FORCE_COLOR=1"}, check: func(t *testing.T, r result) {
			if !strings.Contains(r.stdout, "\x1b[0;32m") {
				t.Errorf("no colour: %q", r.stdout)
			}
		}},
		{name: "failure", playbook: "02-failure.yml"},
		{name: "warnings", playbook: "03-warnings.yml", check: func(t *testing.T, r result) {
			if !strings.Contains(r.stderr, "[WARNING]: conditional statements") {
				t.Errorf("no warning on stderr: %q", r.stderr)
			}
		}},
		{name: "loop", playbook: "04-loop.yml"},
		{name: "handlers", playbook: "05-handlers.yml"},
		{name: "check mode", playbook: "06-check.yml", args: []string{"--check"}, env: []string{"ANSIBLE_CHECK_MODE_MARKERS=1"}},
		{name: "secrets", playbook: "07-secrets.yml", check: func(t *testing.T, r result) {
			b, _ := os.ReadFile(r.out)
			for _, secret := range []string{"s3cr3t-pa55", "tok-0123456789abcdef", "hunter2-pa55"} {
				if strings.Contains(r.stdout+r.stderr, secret) || bytes.Contains(b, []byte(secret)) {
					t.Errorf("%s is shown or recorded", secret)
				}
			}
		}},
		{name: "rescue", playbook: "08-rescue.yml"},
		{name: "skips", playbook: "09-skips.yml"},
		{name: "syntax error", playbook: "10-syntax-error.yml"},
		{name: "multi-line arguments", playbook: "11-multiline-args.yml"},
		{name: "prompt without a terminal", playbook: "12-prompt.yml"},
		{name: "no hosts matched", playbook: "13-two-plays.yml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			argv := append(append([]string{"ansible-playbook"}, tc.args...), tc.playbook)
			bare := runBare(t, dir, tc.env, argv...)
			r := startWith(t, tc.env, inDir(dir), append([]string{"run", "--"}, argv...)...).wait(5 * time.Minute)
			if r.code != bare.code {
				t.Errorf("exit %d, bare %d", r.code, bare.code)
			}
			if r.stdout != bare.stdout {
				t.Errorf("stdout differs:\n%s", testutil.DiffLines(bare.stdout, r.stdout))
			}
			if r.stderr != bare.stderr {
				t.Errorf("stderr differs:\n%s", testutil.DiffLines(bare.stderr, r.stderr))
			}
			if len(r.records) == 0 || r.records[0].str("message") != "common/OperationStarted" {
				t.Errorf("the run was not reported: %v", types(r.records))
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

// The OpenTofu corpus: each configuration run bare and through
// `progressotel run`, which reads -json: what a user needs of the bare
// output is there, on the bare output's stream (docs/cli.md, "What the
// wrapper prints"): every diagnostic whole, the planned change per
// resource, the apply's progress and provisioners' output, the summary
// lines, the outputs; and the same status.
func TestTofuCorpusKeepsWhatTheUserNeeds(t *testing.T) {
	tofu := testutil.Tofu(t)
	env := tofuEnv(t, filepath.Dir(tofu))
	src, err := filepath.Abs(filepath.Join("testdata", "corpus", "tofu"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		config      string
		setup, args []string
		code        int
	}{
		{config: "01-apply-outputs", args: []string{"apply", "-auto-approve"}},
		{config: "02-provisioner-failure", args: []string{"apply", "-auto-approve"}, code: 1},
		{config: "03-check-warning", args: []string{"apply", "-auto-approve"}},
		{config: "04-plan", args: []string{"plan"}},
		{config: "05-plan-detailed-exitcode", args: []string{"plan", "-detailed-exitcode"}, code: 2},
		{config: "06-invalid-argument", args: []string{"plan"}, code: 1},
		{config: "07-undeclared-reference", args: []string{"apply", "-auto-approve"}, code: 1},
		{config: "08-provisioner-output", args: []string{"apply", "-auto-approve", "-no-color"}},
		{config: "09-update", setup: []string{"apply", "-auto-approve"}, args: []string{"apply", "-auto-approve", "-var", "size=large"}},
		{config: "10-destroy", setup: []string{"apply", "-auto-approve"}, args: []string{"destroy", "-auto-approve"}},
		{config: "10-destroy", setup: []string{"apply", "-auto-approve"}, args: []string{"plan"}}, // no changes
	} {
		t.Run(tc.config+"/"+strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			prepare := func() string {
				dir := t.TempDir()
				copyTo(t, filepath.Join(src, tc.config, "main.tf"), filepath.Join(dir, "main.tf"))
				for _, step := range [][]string{{"init", "-input=false"}, tc.setup} {
					if len(step) == 0 {
						continue
					}
					if r := runBare(t, dir, env, append([]string{tofu}, step...)...); r.code != 0 {
						t.Fatalf("tofu %v: exit %d\n%s%s", step, r.code, r.stdout, r.stderr)
					}
				}
				return dir
			}
			bare := runBare(t, prepare(), env, append([]string{tofu}, tc.args...)...)
			if bare.code != tc.code {
				t.Fatalf("bare tofu %v: exit %d, want %d\n%s%s", tc.args, bare.code, tc.code, bare.stdout, bare.stderr)
			}
			r := startWith(t, env, inDir(prepare()), append([]string{"run", "--", "tofu"}, tc.args...)...).wait(5 * time.Minute)
			if r.code != bare.code {
				t.Errorf("exit %d, bare %d\n%s", r.code, bare.code, r.stderr)
			}
			for _, s := range []struct{ name, bare, wrapped string }{{"stdout", bare.stdout, r.stdout}, {"stderr", bare.stderr, r.stderr}} {
				got := tofuLines(s.wrapped)
				for _, want := range neededTofuLines(s.bare) {
					if i := slices.Index(got, want); i >= 0 {
						got = slices.Delete(got, i, i+1)
						continue
					}
					t.Errorf("%s: no %q\nbare:\n%s\nwrapped:\n%s", s.name, want, s.bare, s.wrapped)
				}
			}
		})
	}
}

var (
	ansiSGR    = regexp.MustCompile(`\x1b\[[0-9;]*m`)
	tofuID     = regexp.MustCompile(`\[id=[^\]]*\]`)
	tofuAfter  = regexp.MustCompile(`after \d+s`)
	tofuNeeded = regexp.MustCompile(`^(  # \S+ |Plan: |Apply complete! |Destroy complete! |No changes\. |\S+: (Creating\.\.\.|Creation complete|Destroying\.\.\.|Destruction complete|Modifying\.\.\.|Modifications complete|Provisioning with)|\S+ \(local-exec\): )`)
)

// tofuLines are the lines of the tool's text without colours, ids and
// times, which differ from run to run.
func tofuLines(s string) []string {
	s = tofuAfter.ReplaceAllString(tofuID.ReplaceAllString(ansiSGR.ReplaceAllString(s, ""), "[id=ID]"), "after Ns")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return lines
}

// neededTofuLines are the lines of the bare output a user needs: each
// diagnostic's box, the planned changes, the progress and provisioners'
// lines, the summaries and the outputs.
func neededTofuLines(s string) []string {
	var out []string
	inBox, inOutputs := false, false
	for _, l := range tofuLines(s) {
		switch {
		case l == "╷":
			inBox = true
		case l == "Outputs:":
			inOutputs = true
		}
		if inBox || (inOutputs && l != "") || tofuNeeded.MatchString(l) {
			out = append(out, l)
		}
		if l == "╵" {
			inBox = false
		}
	}
	return out
}
