//go:build !unix

package cli

import (
	"os"
	"syscall"
)

var (
	forwardAlways          = []os.Signal{os.Interrupt}
	forwardWithoutTerminal []os.Signal
)

func reraise(syscall.Signal) {}

func fromTerminal() bool { return false }

func signalName(s syscall.Signal) string { return s.String() }
