package main

import (
	"fmt"
	"io"
	"os"
	"time"
)

// shutdownTimeoutEnv names the environment variable that bounds a stop:
// a Go duration (default 8s); 0 waits as long as the shutdown takes.
const shutdownTimeoutEnv = "PROGRESS_SHUTDOWN_TIMEOUT"

// defaultShutdownTimeout fits inside the usual grace periods (Kubernetes
// 30 s, systemd 90 s) with room for the exit itself, and is longer than one
// produce attempt (the kafka exporters' timeout, 5 s), so that a stop with
// Kafka reachable finishes cleanly.
const defaultShutdownTimeout = 8 * time.Second

// shutdownTimeout reads shutdownTimeoutEnv through getenv.
func shutdownTimeout(getenv func(string) string) (time.Duration, error) {
	v := getenv(shutdownTimeoutEnv)
	if v == "" {
		return defaultShutdownTimeout, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s=%q: want a duration such as 8s, or 0 for no bound", shutdownTimeoutEnv, v)
	}
	return d, nil
}

// shutdownWatchdog ends the process when a graceful shutdown overruns its
// bound.
//
// Why: with acks=all franz-go produces idempotently, and cannot abandon a
// record sent to a broker that then went away; the exporter's queue
// consumer waits in that produce until Kafka is back, and the shutdown
// waits for it, so a SIGTERM during a Kafka outage would hang until
// SIGKILL. By then everything accepted is in the persistent queues, and
// the request in flight is sent again after the next start, as after a
// SIGKILL: exiting at the bound has the same outcome, sooner.
type shutdownWatchdog struct {
	timeout time.Duration
	exit    func(code int)
	log     io.Writer
}

// watch waits for the first signal on sig, then calls exit(1) if the
// process is still running timeout later.
func (w shutdownWatchdog) watch(sig <-chan os.Signal) {
	s := <-sig
	time.Sleep(w.timeout)
	fmt.Fprintf(w.log, "%s: still shutting down %v after the signal (%v); exiting (%s=%v). "+
		"Accepted data stays in the persistent queues and is sent after the next start.\n",
		distName, w.timeout, s, shutdownTimeoutEnv, w.timeout)
	w.exit(1)
}
