//go:build unix

package procctl

import (
	"io"
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

// TestExitCode: a shell's view of a death by signal n is 128+n.
func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		script string
		want   int
	}{
		{"exit 0", 0},
		{"exit 3", 3},
		{"kill -TERM $$", 128 + int(syscall.SIGTERM)},
		{"kill -KILL $$", 128 + int(syscall.SIGKILL)},
	} {
		cmd := exec.Command("sh", "-c", tc.script)
		_ = cmd.Run()
		if got := ExitCode(cmd.ProcessState); got != tc.want {
			t.Errorf("%s: ExitCode = %d, want %d", tc.script, got, tc.want)
		}
	}
}

// start runs script in a Child and returns it with the pid the script
// prints first (of a process it started).
func start(t *testing.T, stop Stop, script string) (*Child, int) {
	t.Helper()
	c, err := New(exec.Command("sh", "-c", script), stop)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 32)
	for !strings.Contains(string(buf), "\n") {
		b := make([]byte, 32)
		n, err := c.Stdout.Read(b)
		if err != nil {
			t.Fatal(err)
		}
		buf = append(buf, b[:n]...)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf)))
	if err != nil {
		t.Fatalf("pid %q: %v", buf, err)
	}
	return c, pid
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// aliveNotZombie is alive, a zombie (dead, not reaped) counting as dead
// where /proc tells.
func aliveNotZombie(pid int) bool {
	if !alive(pid) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// waitGone waits until pid is gone (reaped by init, since its parent
// exited), failing after a while.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) is still running", what, pid)
		}
	}
}

// TestStopGroupAfterGrace: a child that ignores the signal is killed with
// its whole group once the grace period ends, and Wait reports it
// signalled.
func TestStopGroupAfterGrace(t *testing.T) {
	expired := false
	c, helper := start(t, Stop{Signal: syscall.SIGINT, Group: true, Grace: 200 * time.Millisecond,
		OnGraceExpired: func() { expired = true }},
		`trap '' INT; sleep 600 & echo $!; wait`)
	c.Stop()
	go func() { _, _ = io.Copy(io.Discard, c.Stdout) }()
	signalled, _ := c.Wait()
	if !signalled || !expired {
		t.Errorf("signalled %v, grace expired %v: want both", signalled, expired)
	}
	if got := ExitCode(c.Cmd.ProcessState); got != 128+int(syscall.SIGKILL) {
		t.Errorf("exit code %d, want SIGKILL's", got)
	}
	waitGone(t, helper, "the helper in the child's group")
}

// TestStopOthers: a helper in a session of its own, named by Others, is
// killed once the child has exited on the signal.
func TestStopOthers(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	var helper int
	c, pid := start(t, Stop{Signal: syscall.SIGTERM, Grace: 200 * time.Millisecond,
		Others: func(int) []int { return []int{helper} }},
		`trap 'exit 0' TERM; setsid sleep 600 & echo $!; while :; do sleep 0.05; done`)
	helper = pid
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if pgid, err := syscall.Getpgid(helper); err == nil && pgid == helper {
			break // setsid has made its session
		}
		if time.Now().After(deadline) {
			t.Fatal("setsid did not make a session")
		}
	}
	c.Stop()
	go func() { _, _ = io.Copy(io.Discard, c.Stdout) }()
	if signalled, _ := c.Wait(); !signalled {
		t.Error("not signalled")
	}
	if got := ExitCode(c.Cmd.ProcessState); got != 0 {
		t.Errorf("exit code %d, want 0 (the child's trap)", got)
	}
	waitGone(t, helper, "the helper in its own session")
}

// TestWaitWithoutStop: a child that exits by itself is not signalled,
// and a Stop after its exit does nothing.
func TestWaitWithoutStop(t *testing.T) {
	c, _ := start(t, Stop{Signal: syscall.SIGTERM, Grace: time.Second}, `echo $$; exit 4`)
	_, _ = io.Copy(io.Discard, c.Stdout)
	signalled, err := c.Wait()
	c.Stop()
	if signalled || err == nil || ExitCode(c.Cmd.ProcessState) != 4 {
		t.Errorf("signalled %v, err %v, exit code %d: want false, an *exec.ExitError, 4", signalled, err, ExitCode(c.Cmd.ProcessState))
	}
}

func TestDescendantGroups(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	c, helper := start(t, Stop{Signal: syscall.SIGKILL, Group: true},
		`setsid sleep 600 & echo $!; wait`)
	defer func() {
		_ = syscall.Kill(-helper, syscall.SIGKILL)
		c.Stop()
		go func() { _, _ = io.Copy(io.Discard, c.Stdout) }()
		_, _ = c.Wait()
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		for _, g := range DescendantGroups(c.Cmd.Process.Pid) {
			if g == helper {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the helper's session %d is not among %v", helper, DescendantGroups(c.Cmd.Process.Pid))
		}
	}
}

// TestDeliver: a signal for the command goes to the child alone, as
// kill(1) sends it; a TerminalSignal to its whole group, as a terminal's
// Ctrl-C does; Delivered tells the last one. (SIGTERM: a shell's
// background job ignores SIGINT.)
func TestDeliver(t *testing.T) {
	for _, tc := range []struct {
		name        string
		sig         os.Signal
		helperLives bool
	}{
		{"to the child", syscall.SIGTERM, true},
		{"from the terminal", TerminalSignal{Sig: syscall.SIGTERM}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mark := filepath.Join(t.TempDir(), "got")
			c, helper := start(t, Stop{Signal: syscall.SIGTERM, Grace: time.Second},
				`trap 'echo TERM > `+mark+`; exit 0' TERM; sleep 600 & echo $!; while :; do sleep 0.05; done`)
			defer func() { _ = syscall.Kill(helper, syscall.SIGKILL) }()
			// Until the helper runs sleep, a signal may meet the shell
			// between its fork and its exec, which drops a trapped one.
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if b, err := os.ReadFile("/proc/" + strconv.Itoa(helper) + "/cmdline"); err != nil || strings.HasPrefix(string(b), "sleep") {
					break // no /proc: hope for the best
				}
				if time.Now().After(deadline) {
					t.Fatal("the helper never ran sleep")
				}
			}
			c.Deliver(tc.sig)
			go func() { _, _ = io.Copy(io.Discard, c.Stdout) }()
			if signalled, _ := c.Wait(); signalled {
				t.Error("Wait says Stop signalled it")
			}
			if b, _ := os.ReadFile(mark); strings.TrimSpace(string(b)) != "TERM" {
				t.Fatalf("the child got %q", b)
			}
			if c.Delivered() != syscall.SIGTERM {
				t.Errorf("Delivered %v", c.Delivered())
			}
			if tc.helperLives {
				if !aliveNotZombie(helper) {
					t.Error("the helper in the child's group got the signal too")
				}
				return
			}
			// Dead, if not reaped: its parent may exit first, and no
			// init reaps orphans in some containers.
			for deadline := time.Now().Add(30 * time.Second); aliveNotZombie(helper); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the helper in the child's group (pid %d) is still running", helper)
				}
			}
		})
	}
}

// TestInheritGroup: a child in the caller's process group, whose stdout
// is the caller's choice (no pipe); a stop signals the child alone.
func TestInheritGroup(t *testing.T) {
	out := &testutil.SyncBuffer{}
	cmd := exec.Command("sh", "-c", `echo $(ps -o pgid= $$); trap 'exit 3' TERM; while :; do sleep 0.05; done`)
	cmd.Stdout = out
	c, err := New(cmd, Stop{Signal: syscall.SIGTERM, Grace: 5 * time.Second, InheritGroup: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Stdout != nil {
		t.Fatal("a pipe for a stdout that was set")
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(out.String(), "\n"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no output")
		}
	}
	c.Stop()
	signalled, _ := c.Wait()
	if pgid, _ := strconv.Atoi(strings.TrimSpace(out.String())); pgid != syscall.Getpgrp() {
		t.Errorf("the child's group %d, want the caller's %d", pgid, syscall.Getpgrp())
	}
	if !signalled || ExitCode(cmd.ProcessState) != 3 {
		t.Errorf("signalled %v, exit %d: want the child's trap", signalled, ExitCode(cmd.ProcessState))
	}
}
