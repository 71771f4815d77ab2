// Package demo holds what the examples share to run a real playbook: the
// demo's Install playbook, a recorded real run of it for machines without
// Ansible, and the steps to run or replay it.
package demo

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/progressotel/progressotel/ansible"
)

//go:embed project
var project embed.FS

// Recorded is a real run of project/install.yml by ansible-runner 2.3 and
// ansible-core 2.14, as `ansible-runner run --json` printed it (record.sh
// made it; only local paths were replaced).
//
//go:embed testdata/install.jsonl
var Recorded []byte

// PlaybookName is the demo playbook's file.
const PlaybookName = "install.yml"

// Installed reports whether ansible-runner is on PATH, so that the real
// playbook can run.
func Installed() bool {
	_, err := exec.LookPath("ansible-runner")
	return err == nil
}

// InstallHint says how to install Ansible for the live demo.
const InstallHint = "apt-get install --no-install-recommends ansible-core python3-ansible-runner"

// Run runs the demo's playbook with the real Ansible through the ansible
// adapter with opts, from a temporary directory named prefix... that it
// removes afterwards.
func Run(ctx context.Context, prefix string, opts ...ansible.Option) (ansible.Result, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return ansible.Result{}, err
	}
	defer os.RemoveAll(dir)
	pb, err := prepare(dir)
	if err != nil {
		return ansible.Result{}, err
	}
	return ansible.Run(ctx, pb, opts...)
}

// prepare writes the demo's project, its inventory (web-1 and web-2, both
// this machine over the local connection) and its state directory under
// dir, and returns the playbook to run.
func prepare(dir string) (ansible.Playbook, error) {
	proj := filepath.Join(dir, "project")
	state := filepath.Join(dir, "state")
	sub, err := fs.Sub(project, "project")
	if err != nil {
		return ansible.Playbook{}, err
	}
	if err := os.CopyFS(proj, sub); err != nil {
		return ansible.Playbook{}, fmt.Errorf("demo project: %w", err)
	}
	if err := os.Mkdir(state, 0o700); err != nil {
		return ansible.Playbook{}, err
	}
	inv := filepath.Join(dir, "hosts")
	local := "ansible_connection=local ansible_python_interpreter=/usr/bin/python3"
	text := "[web]\nweb-1 " + local + "\nweb-2 " + local + "\n"
	if err := os.WriteFile(inv, []byte(text), 0o600); err != nil {
		return ansible.Playbook{}, err
	}
	return ansible.Playbook{
		ProjectDir: proj,
		Playbook:   PlaybookName,
		Inventory:  inv,
		ExtraVars:  map[string]any{"state_dir": state},
	}, nil
}

// Paced returns the recorded run as a reader that waits between events
// as Ansible did, at most maxDelay per pause (0: no pause), so that a
// replay unfolds like the live run.
func Paced(maxDelay time.Duration) io.Reader {
	if maxDelay <= 0 {
		return bytes.NewReader(Recorded)
	}
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(bytes.NewReader(Recorded))
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		var last time.Time
		for sc.Scan() {
			if t := created(sc.Bytes()); !t.IsZero() {
				if !last.IsZero() && t.After(last) {
					time.Sleep(min(t.Sub(last), maxDelay))
				}
				last = t
			}
			if _, err := fmt.Fprintf(pw, "%s\n", sc.Bytes()); err != nil {
				return
			}
		}
		pw.CloseWithError(sc.Err())
	}()
	return pr
}

// created reads a job event's "created" time without decoding the line.
func created(line []byte) time.Time {
	_, rest, found := bytes.Cut(line, []byte(`"created": "`))
	value, _, closed := bytes.Cut(rest, []byte(`"`))
	if !found || !closed {
		return time.Time{}
	}
	t, _ := time.Parse("2006-01-02T15:04:05.999999", string(value))
	return t
}
