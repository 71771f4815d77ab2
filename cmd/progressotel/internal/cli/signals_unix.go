//go:build unix

package cli

import (
	"cmp"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// forwardAlways are forwarded to the child whatever the terminal.
var forwardAlways = []os.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2}

// forwardWithoutTerminal are forwarded only when they cannot have come from
// the terminal, which sends them to its whole foreground process group.
var forwardWithoutTerminal = []os.Signal{syscall.SIGINT, syscall.SIGQUIT}

// reraisable are the signals the Go runtime lets a process die of once
// reset: others it ignores (SIGUSR1, SIGPIPE) or turns into a stack dump
// (SIGQUIT, SIGABRT), so for them progressotel exits 128+N, as a shell
// reports a death by signal N anyway.
var reraisable = map[syscall.Signal]bool{
	syscall.SIGHUP: true, syscall.SIGINT: true, syscall.SIGTERM: true, syscall.SIGKILL: true,
}

// reraise kills the process with sig when it can; it returns when it
// could not (the caller then exits with 128+N).
func reraise(sig syscall.Signal) {
	if !reraisable[sig] {
		return
	}
	signal.Reset(sig)
	if err := syscall.Kill(os.Getpid(), sig); err != nil {
		return
	}
	// Delivered at once unless ignored (SIG_IGN inherited under nohup):
	// then the caller falls back to the exit code.
	time.Sleep(time.Second)
}

// fromTerminal reports whether a SIGINT or SIGQUIT received now may have
// come from the controlling terminal: this process is in its foreground
// process group, so a child sharing the group got it too. Without one (a
// CI job, a service), or in a background job, it was sent to progressotel
// alone and must be forwarded.
func fromTerminal() bool {
	tty, err := os.OpenFile("/dev/tty", os.O_RDONLY, 0)
	if err != nil {
		return false // ENXIO: no controlling terminal
	}
	defer tty.Close()
	fg, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCGPGRP)
	return err == nil && fg == unix.Getpgrp()
}

func signalName(s syscall.Signal) string {
	return cmp.Or(unix.SignalName(s), strings.TrimSpace(s.String()))
}
