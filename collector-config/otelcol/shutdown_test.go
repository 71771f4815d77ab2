package main

import (
	"bytes"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestShutdownTimeoutFromEnv(t *testing.T) {
	for v, want := range map[string]time.Duration{"": defaultShutdownTimeout, "3s": 3 * time.Second, "0": 0, "1m": time.Minute} {
		got, err := shutdownTimeout(func(string) string { return v })
		if err != nil || got != want {
			t.Errorf("%s=%q: got %v, %v; want %v", shutdownTimeoutEnv, v, got, err, want)
		}
	}
	for _, v := range []string{"8", "-1s", "soon"} {
		if _, err := shutdownTimeout(func(string) string { return v }); err == nil || !strings.Contains(err.Error(), shutdownTimeoutEnv) {
			t.Errorf("%s=%q: err = %v, want an error naming the variable", shutdownTimeoutEnv, v, err)
		}
	}
}

// The watchdog does nothing until a signal arrives, then ends the process
// with status 1 once the bound has passed, and says why.
func TestShutdownWatchdogExitsAfterTheBound(t *testing.T) {
	var log bytes.Buffer
	exited := make(chan int, 1)
	sig := make(chan os.Signal, 1)
	w := shutdownWatchdog{timeout: 20 * time.Millisecond, exit: func(code int) { exited <- code }, log: &log}
	go w.watch(sig)

	select {
	case <-exited:
		t.Fatal("exit without a signal")
	case <-time.After(100 * time.Millisecond):
	}
	sig <- syscall.SIGTERM
	select {
	case code := <-exited:
		if code != 1 {
			t.Errorf("exit code %d, want 1", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no exit after the bound")
	}
	if !strings.Contains(log.String(), shutdownTimeoutEnv) || !strings.Contains(log.String(), "persistent queues") {
		t.Errorf("message does not explain the exit: %q", log.String())
	}
}
