package ansible

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
)

// driverEnv makes the test binary a driver that runs the Playbook in the
// variable (JSON) with Run and nothing else.
const driverEnv = "ANSIBLE_TEST_DRIVER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(driverEnv); spec != "" {
		var p Playbook
		if err := json.Unmarshal([]byte(spec), &p); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		_, err := Run(context.Background(), p)
		fmt.Fprintln(os.Stderr, "driver: Run returned:", err)
		os.Exit(3) // the test kills the driver before Run returns
	}
	os.Exit(m.Run())
}

// TestKilledDriverStopsThePlaybook: a driver killed with SIGKILL in the
// middle of a real playbook run cannot stop it. ansible-runner gets its
// SIGTERM from the kernel (the parent-death signal) and stops the
// playbook, which otherwise runs on in a session of its own until its
// long task ends.
func TestKilledDriverStopsThePlaybook(t *testing.T) {
	requireAnsible(t)
	inv := inventory(t)
	marker := fmt.Sprintf("800.%d%06d", os.Getpid(), time.Now().Nanosecond()/1000)
	killDriverMidTask(t, inv, marker)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		left := append(testutil.ProcessesWith(marker), testutil.ProcessesWith(inv)...)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run went on after its driver was killed:\n%s", strings.Join(left, "\n"))
		}
	}
}

// TestKilledDriversPrivateDirectoryIsCleaned (issue 33, case 11): a driver
// killed with SIGKILL leaves its private directory (the extra variables,
// runner's artifacts). What ansible-runner wrote of the environment there
// holds only what it needs (not the driver's other variables), and the
// next run removes the directory, its owner being gone, but not that of a
// live process.
func TestKilledDriversPrivateDirectoryIsCleaned(t *testing.T) {
	requireAnsible(t)
	inv := inventory(t)
	tmp := t.TempDir()
	marker := fmt.Sprintf("801.%d%06d", os.Getpid(), time.Now().Nanosecond()/1000)
	killDriverMidTask(t, inv, marker, "TMPDIR="+tmp, "PROGRESSOTEL_TEST_DRIVER_TOKEN=tok-canary-8812")

	left, _ := filepath.Glob(filepath.Join(tmp, privatePrefix+"*"))
	if len(left) != 1 {
		t.Fatalf("private directories after the kill: %v, want the killed driver's", left)
	}
	// ansible-runner outlives the driver for a moment: it stops the
	// playbook on its parent-death signal, then writes its last artifacts
	// into the directory. A sweep meanwhile may leave the directory to the
	// next one (cleanStale); this test's sweep comes after runner is gone.
	waitUntil(t, func() bool { return len(testutil.ProcessesWith(left[0])) == 0 }, nil, "", func() string {
		return fmt.Sprintf("ansible-runner of the killed driver never ended: %v", testutil.ProcessesWith(left[0]))
	})
	b, err := os.ReadFile(filepath.Join(left[0], "artifacts", runIdent, "command"))
	if err != nil {
		t.Fatal(err)
	}
	var command struct{ Env map[string]string }
	if err := json.Unmarshal(b, &command); err != nil {
		t.Fatal(err)
	}
	if _, ok := command.Env["PROGRESSOTEL_TEST_DRIVER_TOKEN"]; ok || strings.Contains(string(b), "tok-canary-8812") {
		t.Errorf("the driver's own variable reached runner's artifacts")
	}
	if command.Env["PATH"] == "" {
		t.Errorf("runner's environment lacks PATH: %v", command.Env)
	}
	// A directory of a live process (this one's parent) stays.
	live := filepath.Join(tmp, fmt.Sprintf("%s%d-keep", privatePrefix, os.Getppid()))
	if err := os.Mkdir(live, 0o700); err != nil {
		t.Fatal(err)
	}

	c := newCapture(t)
	res, err := Run(context.Background(), Playbook{ProjectDir: projectDir, Playbook: "delegate.yml", Inventory: inv, Limit: "web-1"},
		append(c.options(t), WithTempDir(tmp))...)
	if err != nil {
		t.Fatal(err)
	}
	checkRun(t, c, res)
	if _, err := os.Stat(left[0]); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the killed driver's private directory is still there: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live process's directory was removed: %v", err)
	}
}

// killDriverMidTask starts this test binary as a driver (TestMain) running
// sleep.yml on inv, with a task that sleeps for marker seconds (a number
// no other process has on its command line) and env added to its
// environment, and kills it with SIGKILL once the sleep has started. The
// test's cleanup kills whatever of the run is left.
func killDriverMidTask(t *testing.T, inv, marker string, env ...string) {
	t.Helper()
	spec, err := json.Marshal(Playbook{ProjectDir: projectDir, Playbook: "sleep.yml", Inventory: inv,
		ExtraVars: map[string]any{"sleep_seconds": marker}})
	if err != nil {
		t.Fatal(err)
	}
	driver := exec.Command(os.Args[0], "-test.run=^$")
	driver.Env = append(append(os.Environ(), driverEnv+"="+string(spec)), env...)
	driver.Stderr = os.Stderr
	if err := driver.Start(); err != nil {
		t.Fatal(err)
	}
	driverDone := make(chan struct{})
	go func() { _ = driver.Wait(); close(driverDone) }()
	t.Cleanup(func() {
		_ = driver.Process.Kill()
		<-driverDone
		for _, p := range append(testutil.ProcessesWith(marker), testutil.ProcessesWith(inv)...) {
			if pid, err := strconv.Atoi(strings.SplitN(p, ":", 2)[0]); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	waitUntil(t, func() bool { return len(testutil.ProcessesWith(marker)) > 0 }, driverDone,
		"the driver ended before the task's sleep started", func() string { return "the task's sleep " + marker + " never started" })
	if err := driver.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-driverDone
}
