package procctl

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// driverEnv makes the test binary a driver: it starts a Child running the
// script in the variable, prints the child's pid and waits to be killed.
const driverEnv = "PROCCTL_TEST_DRIVER_SCRIPT"

func TestMain(m *testing.M) {
	if script := os.Getenv(driverEnv); script != "" {
		// The main thread is never ended: keep the goroutine below off it.
		runtime.LockOSThread()
		c, err := New(exec.Command("sh", "-c", script), Stop{Signal: syscall.SIGTERM, Grace: time.Second})
		if err == nil {
			// Started from a goroutine that exits locked to its thread, so
			// that the runtime ends that thread: the child must not take
			// it for the driver's death.
			started := make(chan error)
			go func() { runtime.LockOSThread(); started <- c.Start() }()
			err = <-started
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println(c.Cmd.Process.Pid)
		_, _ = io.Copy(io.Discard, c.Stdout)
		select {}
	}
	os.Exit(m.Run())
}

// TestChildStopsWhenTheDriverIsKilled: a driver killed with SIGKILL has no
// chance to stop its child; the kernel sends the child the Stop signal,
// and only then: while the driver lives (threads of it ending included),
// the child runs on.
func TestChildStopsWhenTheDriverIsKilled(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "signal")
	driver := exec.Command(os.Args[0], "-test.run=^$")
	driver.Env = append(os.Environ(), driverEnv+"=trap 'echo TERM > "+mark+"; exit 0' TERM; while :; do sleep 0.05; done")
	out, err := driver.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	driver.Stderr = os.Stderr
	if err := driver.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = driver.Process.Kill()
		t.Fatalf("reading the child's pid: %v", err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	// The driver's threads that ended have not stopped the child.
	time.Sleep(300 * time.Millisecond)
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the child was signalled while the driver lived")
	}
	if !running(child) {
		t.Fatal("the child stopped while the driver lived")
	}
	if err := driver.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = driver.Wait()
	for deadline := time.Now().Add(30 * time.Second); running(child); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) { // a hang detector, not a timing assertion
			_ = syscall.Kill(child, syscall.SIGKILL)
			t.Fatalf("the child (pid %d) outlived its killed driver", child)
		}
	}
	if b, err := os.ReadFile(mark); err != nil || strings.TrimSpace(string(b)) != "TERM" {
		t.Errorf("the child did not get SIGTERM: %q, %v", b, err)
	}
}

// running reports whether pid is a live process (not gone, not a zombie
// waiting for a reaper that may never come in a container).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}
