package ansible

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/progressotel/progressotel/adapter"
)

var record = flag.Bool("record", false, "record testdata/streams/*.jsonl from real Ansible runs (then run with -update)")

// recordings are the real runs behind the golden tests: the playbook (in
// testdata/project, or beside its stream in testdata/streams) and its
// extra vars.
var recordings = []struct {
	name, playbook string
	vars           map[string]any
	beside         bool // the playbook is testdata/streams/<name>.yml
}{
	{"site", "site.yml", nil, false},
	{"fail", "fail.yml", nil, false},
	{"prompt", "prompt.yml", nil, false},
	{"delegate", "delegate.yml", nil, false},
	{"rescuelag", "rescuelag.yml", nil, true},
	{"ignunreach", "ignunreach.yml", nil, true},
	{"nohandler", "nohandler.yml", nil, true},
	{"endhost", "endhost.yml", nil, true},
	{"stripped", "stripped.yml", nil, true},
}

// TestRecordStreams records the job-event streams of real runs, as
// ansible-runner printed them, into testdata/streams. Only the local
// paths are replaced (project → /project, work dir → /work, inventory →
// /inventory/hosts), so that the files do not depend on the machine.
//
//	go test ./ansible -run TestRecordStreams -record && go test ./ansible -run TestGolden -update
//
// -run TestRecordStreams/<name> records one.
func TestRecordStreams(t *testing.T) {
	if !*record {
		t.Skip("run with -record to record new streams from real Ansible")
	}
	requireAnsible(t)
	inv := inventory(t)
	for _, r := range recordings {
		t.Run(r.name, func(t *testing.T) {
			dir := projectDir
			if r.beside {
				dir = filepath.Join("testdata", "streams")
			}
			project, err := filepath.Abs(dir)
			if err != nil {
				t.Fatal(err)
			}
			work := t.TempDir()
			vars := map[string]any{"work_dir": work}
			for k, v := range r.vars {
				vars[k] = v
			}
			var raw bytes.Buffer
			c := newCapture(t)
			opts := append(c.options(t), adapter.Own(func(c *config) { c.RawTee = &raw }))
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			_, err = Run(ctx, Playbook{ProjectDir: project, Playbook: r.playbook, Inventory: inv, ExtraVars: vars}, opts...)
			cancel()
			t.Logf("%s: %v", r.name, err)
			text := raw.String()
			for _, rep := range [][2]string{{project, "/project"}, {work, "/work"}, {inv, "/inventory/hosts"}} {
				text = strings.ReplaceAll(text, rep[0], rep[1])
			}
			path := filepath.Join("testdata", "streams", r.name+".jsonl")
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}
