//go:build unix

package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/progressotel/progressotel/internal/testkit/otlptest"
)

// emitLoop is a shell loop of $N emits, as a script driver writes it.
const emitLoop = `i=0; while [ $i -lt $N ]; do progressotel emit --type demo/Step --detail i:=$i || exit 1; i=$((i+1)); done`

// BenchmarkEmit is the cost of one `progressotel emit` from a shell loop,
// exporting over OTLP/HTTP to a local endpoint: inside a run (the event
// goes over the run's socket) and outside one (each emit sets up its own
// exporter, exports and shuts down), over plain HTTP and over TLS as a
// production collector is reached (a handshake per emit outside a run).
// outside-run-no-exporter is the floor: starting the binary, which warns
// and exits. ns/op is wall time per
// event; events/s its inverse; cpu-ns/op the CPU time of every process
// involved (the shell, the emits, the run), per event.
//
//	go test -run '^$' -bench BenchmarkEmit -benchtime 200x -count 6 ./cmd/progressotel/
func BenchmarkEmit(b *testing.B) {
	plain := otlptest.StartHTTP(b)
	cert, caFile := otlptest.NewCert(b)
	tlsSrv := otlptest.StartHTTPS(b, cert)
	otlp := []string{"OTEL_LOGS_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT=http://" + plain.Addr, "OTEL_TRACES_EXPORTER=none"}
	otlpTLS := []string{"OTEL_LOGS_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT=https://" + tlsSrv.Addr,
		"OTEL_EXPORTER_OTLP_CERTIFICATE=" + caFile, "OTEL_TRACES_EXPORTER=none"}
	run := []string{filepath.Join(binDir, "progressotel"), "run", "--", "sh", "-c", emitLoop}
	loop := []string{"sh", "-c", emitLoop}
	for _, bc := range []struct {
		name string
		env  []string
		argv []string
		srv  *otlptest.HTTPServer // the events must reach it
	}{
		{"inside-run", otlp, run, plain},
		{"outside-run", otlp, loop, plain},
		{"inside-run-tls", otlpTLS, run, tlsSrv},
		{"outside-run-tls", otlpTLS, loop, tlsSrv},
		{"outside-run-no-exporter", nil, loop, nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv := bc.srv
			if srv == nil {
				srv = plain
			}
			before := len(srv.LogEventNames())
			cmd := exec.Command(bc.argv[0], bc.argv[1:]...)
			cmd.Env = append(append(os.Environ(), bc.env...), "N="+strconv.Itoa(b.N))
			b.ResetTimer()
			start := time.Now()
			out, err := cmd.CombinedOutput()
			elapsed := time.Since(start)
			b.StopTimer()
			if err != nil {
				b.Fatalf("%v: %s", err, out)
			}
			got := len(srv.LogEventNames()) - before
			if bc.srv != nil && got < b.N {
				b.Fatalf("%d events reached the endpoint, want at least %d", got, b.N)
			}
			ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
		})
	}
}
