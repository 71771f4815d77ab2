package procctl

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// onParentDeath asks the kernel to send the child stop.Signal (SIGKILL
// when there is none) if the driver dies first, SIGKILL included, so that
// a run does not go on unsupervised: the tool gets its usual request to
// stop (ansible-runner then stops the playbook).
func onParentDeath(cmd *exec.Cmd, stop Stop) {
	sig, ok := stop.Signal.(syscall.Signal)
	if !ok || stop.Signal == os.Kill {
		sig = syscall.SIGKILL
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = sig
}

// startLocked runs start and then wait on one goroutine locked to its OS
// thread, for as long as the child runs. The kernel's parent-death signal
// follows the thread that started the child, not the process: if that
// thread ended (the runtime ends a thread whose goroutine exits while
// locked to it), the child would get the signal while the driver lives.
// The goroutine exits locked once the child has been reaped, so the
// thread ends with nothing left to signal.
func startLocked(start func() error, wait func()) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		err := start()
		started <- err
		if err != nil {
			runtime.UnlockOSThread()
			return
		}
		wait()
	}()
	return <-started
}
