//go:build unix

package ansible

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/progressotel/progressotel/adapter"
)

// BenchmarkRunCPU sets the adapter's CPU against Ansible's own on the same
// playbook, side by side in each iteration, for two playbooks:
// testdata/project/bench.yml (mixed: commands, loops, about 250 events) and
// bench-loop.yml (a loop of debug items, the cheapest events Ansible makes,
// about 610 events). For each:
//
//   - ansible-playbook alone (no adapter, no runner): playbook-cpu-ms;
//   - ansible-runner --json alone, output discarded: runner-cpu-ms
//     (runner and the ansible-playbook it runs);
//   - Run with the real SDK and the JSON lines exporter to io.Discard:
//     adapter-cpu-ms is this process's CPU during Run (decoding, records,
//     spans, export, GC), run-ansible-cpu-ms its children's (runner and
//     ansible-playbook).
//
// adapter-%-of-ansible is adapter-cpu / run-ansible-cpu, the issue's
// budget (at most 5%); adapter-%-of-playbook divides by ansible-playbook
// alone. CPU times come from getrusage, so a loaded machine changes the
// wall time but hardly the ratios. Needs Ansible; a few seconds per
// iteration:
//
//	go test ./ansible -run '^$' -bench BenchmarkRunCPU -benchtime 3x
func BenchmarkRunCPU(b *testing.B) {
	for _, playbook := range []string{"bench.yml", "bench-loop.yml"} {
		b.Run(playbook, func(b *testing.B) { benchRunCPU(b, playbook) })
	}
}

func benchRunCPU(b *testing.B, playbook string) {
	requireAnsible(b)
	inv := inventory(b)
	project, err := filepath.Abs(projectDir)
	if err != nil {
		b.Fatal(err)
	}
	opts, flush := jsonPipeline(b)
	opts = append(opts, adapter.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))

	var alone, runner, adapter, runAnsible time.Duration
	var events int
	for b.Loop() {
		// ansible-playbook alone.
		cmd := exec.Command("ansible-playbook", "-i", inv, filepath.Join(project, playbook))
		cmd.Env = append(os.Environ(), "ANSIBLE_NOCOLOR=True")
		if err := cmd.Run(); err != nil {
			b.Fatalf("ansible-playbook: %v", err)
		}
		alone += cpu(cmd.ProcessState)

		// ansible-runner alone.
		dir := b.TempDir()
		cmd = exec.Command("ansible-runner", "run", dir, "--json", "--project-dir", project, "--playbook", playbook, "--inventory", inv)
		cmd.Env = append(os.Environ(), "ANSIBLE_NOCOLOR=True", "ANSIBLE_DISPLAY_ARGS_TO_STDOUT=True")
		if err := cmd.Run(); err != nil {
			b.Fatalf("ansible-runner: %v", err)
		}
		runner += cpu(cmd.ProcessState)

		// The adapter.
		self0, children0 := rusage(syscall.RUSAGE_SELF), rusage(syscall.RUSAGE_CHILDREN)
		res, err := Run(context.Background(), Playbook{ProjectDir: project, Playbook: playbook, Inventory: inv}, opts...)
		if err != nil {
			b.Fatal(err)
		}
		if err := flush(); err != nil {
			b.Fatal(err)
		}
		adapter += rusage(syscall.RUSAGE_SELF) - self0
		runAnsible += rusage(syscall.RUSAGE_CHILDREN) - children0
		events += res.Events
	}
	n := float64(b.N)
	b.ReportMetric(float64(events)/n, "events/run")
	b.ReportMetric(ms(alone)/n, "playbook-cpu-ms")
	b.ReportMetric(ms(runner)/n, "runner-cpu-ms")
	b.ReportMetric(ms(runAnsible)/n, "run-ansible-cpu-ms")
	b.ReportMetric(ms(adapter)/n, "adapter-cpu-ms")
	b.ReportMetric(float64(adapter.Microseconds())/float64(events), "adapter-µs/event")
	b.ReportMetric(100*float64(adapter)/float64(runAnsible), "adapter-%-of-ansible")
	b.ReportMetric(100*float64(adapter)/float64(alone), "adapter-%-of-playbook")
}

func cpu(ps *os.ProcessState) time.Duration { return ps.UserTime() + ps.SystemTime() }

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processCPU is this process's CPU time so far (user and system).
func processCPU() time.Duration { return rusage(syscall.RUSAGE_SELF) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
