package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
)

// needTool skips the test without a real tool, except under CI=true
// (see testutil.RequireTool).
func needTool(t *testing.T, tool string) {
	t.Helper()
	testutil.RequireTool(t, tool, ".ci/run installs it")
}

// ansibleProject writes a playbook project (local connection, no facts)
// to a fresh directory and returns it; the tests run from it, with
// relative paths, as a user does.
func ansibleProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"inventory": "localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n",
		"site.yml": `- name: Install nginx
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Render the config
      ansible.builtin.debug:
        msg: rendering
    - name: Report from a task
      ansible.builtin.command:
        argv: [progressotel, emit, --type, driver/ConfigRendered, --detail, "file=site.conf"]
      changed_when: false
    - name: Set the password
      ansible.builtin.debug:
        msg: s3cret
      no_log: true
`,
		"failing.yml": `- name: Failing
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Break
      ansible.builtin.command: /bin/false
`,
		"prompt.yml": `- name: Prompting
  hosts: localhost
  gather_facts: false
  vars_prompt:
    - name: release
      prompt: which release
  tasks:
    - ansible.builtin.debug:
        var: release
`,
		"slow.yml": `- name: Slow
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Wait
      ansible.builtin.shell: touch started; sleep 60
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// needAnsible skips the test without the real Ansible (see needTool) and
// returns a fresh project directory (see ansibleProject).
func needAnsible(t *testing.T) string {
	t.Helper()
	needTool(t, "ansible-playbook")
	needTool(t, "ansible-runner")
	return ansibleProject(t)
}

// startPlaybook starts `progressotel run -- ansible-playbook -i inventory
// playbook` in the project dir, without Ansible's colours.
func startPlaybook(t *testing.T, dir, playbook string) *proc {
	t.Helper()
	return startWith(t, []string{"ANSIBLE_NOCOLOR=1"}, inDir(dir), "run", "--", "ansible-playbook", "-i", "inventory", playbook)
}

// inDir makes the started process run in dir.
func inDir(dir string) func(*exec.Cmd) { return func(c *exec.Cmd) { c.Dir = dir } }

// run -- ansible-playbook: the same command line, under ansible-runner;
// Ansible's events live, in the run's trace and sequence, with the emit of
// a task among them and the no_log task's arguments hidden; Ansible's
// output on stdout; its status.
func TestRunAnsiblePlaybook(t *testing.T) {
	dir := needAnsible(t)
	tmp := t.TempDir()
	p := startWith(t, []string{"X_TRACECTX_TRANSACTIONID=tx-ansible", "ANSIBLE_NOCOLOR=1", "TMPDIR=" + tmp}, inDir(dir),
		"run", "--operation", "Install", "--resource-type", "nginx", "--resource-id", "web", "--",
		"ansible-playbook", "-i", "inventory", "site.yml")
	r := p.wait(5 * time.Minute)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	got := types(r.records)
	want := []string{"common/OperationStarted", "ansible/PlayStarted",
		"ansible/TaskStarted", "ansible/TaskStartedOnHost", "ansible/TaskCompletedOnHost",
		"ansible/TaskStarted", "ansible/TaskStartedOnHost", "driver/ConfigRendered", "ansible/TaskCompletedOnHost",
		"ansible/TaskStarted", "ansible/TaskStartedOnHost", "ansible/TaskCompletedOnHost",
		"ansible/PlaybookResult", "common/OperationCompleted"}
	if !slices.Equal(got, want) {
		t.Fatalf("records\n%v\nwant\n%v", got, want)
	}
	trace := r.records[0].str("traceId")
	for i, rec := range r.records {
		if rec.str("traceId") != trace || rec.str("tracectx.transactionid") != "tx-ansible" || rec.seq() != int64(i+1) {
			t.Fatalf("record %d (%s): trace %s tx %q sequence %d", i, rec.str("message"), rec.str("traceId"), rec.str("tracectx.transactionid"), rec.seq())
		}
		if res, _ := rec["resource"].(map[string]any); res["id"] != "web" {
			t.Fatalf("record %d: resource %v", i, res)
		}
	}
	if d := r.records[9].details(); d["taskName"] != "Set the password" || d["argsHidden"] != true || d["args"] != nil {
		t.Fatalf("no_log task: %v", d)
	}
	if strings.Contains(r.stdout+r.stderr, "s3cret") {
		t.Fatal("a no_log value reached the output")
	}
	if !strings.Contains(r.stdout, "PLAY RECAP") {
		t.Fatalf("stdout is not Ansible's display:\n%s", r.stdout)
	}
	// The run's private directories (runner's, with the artifacts that
	// hold the environment and the facts, and the socket's) are gone.
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Fatalf("left behind in TMPDIR: %v", left)
	}
}

// Ansible's statuses come through unchanged: 2 for failed hosts, 1 for a
// playbook that cannot be found (reported, with Ansible's error, although
// Ansible wrote no event).
func TestRunAnsiblePlaybookStatuses(t *testing.T) {
	dir := needAnsible(t)
	r := startPlaybook(t, dir, "failing.yml").wait(5 * time.Minute)
	if r.code != 2 {
		t.Fatalf("failing: exit %d, want Ansible's 2\n%s", r.code, r.stderr)
	}
	last := r.records[len(r.records)-1]
	if last.str("message") != "common/OperationFailed" || !slices.Contains(types(r.records), "ansible/TaskFailedOnHost") {
		t.Fatalf("failing: %v", types(r.records))
	}

	r = startPlaybook(t, dir, "missing.yml").wait(5 * time.Minute)
	if r.code != 1 {
		t.Fatalf("missing: exit %d, want Ansible's 1\n%s", r.code, r.stderr)
	}
	if got := types(r.records); !slices.Equal(got, []string{"common/OperationStarted", "common/OperationFailed"}) {
		t.Fatalf("missing: %v", got)
	}
	// The description is the package's (ansible.RunCommandLine's), as
	// for a run through the library.
	if d := r.records[1].details()["description"].(string); !strings.Contains(d, "missing.yml") {
		t.Fatalf("missing: description %q", d)
	}
}

// A vars_prompt without a terminal: as bare ansible-playbook, it warns
// "Not prompting as we are not in interactive mode", goes on with the
// default and exits 0; the same bytes on the same streams.
func TestRunAnsiblePlaybookThatPrompts(t *testing.T) {
	dir := needAnsible(t)
	bare := exec.Command("ansible-playbook", "-i", "inventory", "prompt.yml")
	bare.Dir, bare.Env = dir, append(os.Environ(), "ANSIBLE_NOCOLOR=1")
	var bareOut, bareErr strings.Builder
	bare.Stdout, bare.Stderr = &bareOut, &bareErr
	_ = bare.Run()
	r := startPlaybook(t, dir, "prompt.yml").wait(5 * time.Minute)
	if r.code != 0 || r.code != bare.ProcessState.ExitCode() || !strings.Contains(r.stderr, "Not prompting as we are not in interactive mode") {
		t.Fatalf("exit %d (bare %d)\n%s", r.code, bare.ProcessState.ExitCode(), r.stderr)
	}
	if r.stdout != bareOut.String() || r.stderr != bareErr.String() {
		t.Fatalf("not the bare streams:\n%s\n%s\nbare:\n%s\n%s", r.stdout, r.stderr, &bareOut, &bareErr)
	}
	if got := types(r.records); !slices.Contains(got, "ansible/VarPrompt") || got[len(got)-1] != "common/OperationCompleted" {
		t.Fatalf("records %v", got)
	}
}

// run -- ansible-runner run: as given, with --json added.
func TestRunAnsibleRunner(t *testing.T) {
	needTool(t, "ansible-runner")
	src := ansibleProject(t)
	pdd := t.TempDir()
	for _, d := range []string{"project", "inventory"} {
		if err := os.Mkdir(filepath.Join(pdd, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyTo(t, filepath.Join(src, "site.yml"), filepath.Join(pdd, "project", "site.yml"))
	copyTo(t, filepath.Join(src, "inventory"), filepath.Join(pdd, "inventory", "hosts"))
	r := runPO(t, []string{"ANSIBLE_NOCOLOR=1"}, "run", "--", "ansible-runner", "run", pdd, "-p", "site.yml")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	got := types(r.records)
	for _, want := range []string{"ansible/PlayStarted", "driver/ConfigRendered", "ansible/PlaybookResult", "common/OperationCompleted"} {
		if !slices.Contains(got, want) {
			t.Errorf("no %s among %v", want, got)
		}
	}
	if strings.Contains(r.stdout, `"event":`) || !strings.Contains(r.stdout, "PLAY RECAP") {
		t.Fatalf("stdout is not Ansible's display:\n%s", r.stdout)
	}
}

func copyTo(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
