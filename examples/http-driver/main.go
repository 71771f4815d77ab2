// Command http-driver is a minimal Ignition-style driver: POST
// /api/driver/lifecycle/execute answers 202 with a requestId and runs the
// transition in the background, emitting progress events and logs that
// carry the request's trace context and tracectx. With Ansible installed
// (-ansible auto, the default) the transition is a real playbook run
// through the ansible adapter; otherwise (or with -ansible off) a short
// simulated one.
//
//	OTEL_LOGS_EXPORTER=json go run ./examples/http-driver -addr 127.0.0.1:18080
//	curl -i -X POST http://127.0.0.1:18080/api/driver/lifecycle/execute \
//	  -H 'traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' \
//	  -H 'X-Tracectx-TransactionId: tx-1' -H 'X-Tracectx-ProcessId: p-1' \
//	  -d '{"lifecycleName":"Install"}'
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.opentelemetry.io/contrib/bridges/otelslog"

	"github.com/progressotel/progressotel/ansible"
	"github.com/progressotel/progressotel/examples/internal/demo"
	"github.com/progressotel/progressotel/otelbridge"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], nil, nil); err != nil {
		fmt.Fprintln(os.Stderr, "http-driver:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends (SIGINT or SIGTERM in main), then stops
// accepting requests, waits for running transitions and flushes telemetry.
// out, when not nil, replaces stdout/stderr for the log exporters; ready,
// when not nil, receives the listening address.
func run(ctx context.Context, args []string, out io.Writer, ready chan<- string) (err error) {
	fs := flag.NewFlagSet("http-driver", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	steps := fs.Int("steps", 3, "steps of the simulated transition")
	stepDelay := fs.Duration("step-delay", 200*time.Millisecond, "duration of one simulated step")
	useAnsible := fs.String("ansible", "auto", "run the demo's real playbook: auto (when Ansible is installed), on, off")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var realPlaybook bool
	switch *useAnsible {
	case "auto":
		realPlaybook = demo.Installed()
	case "on":
		if !demo.Installed() {
			return errors.New("-ansible on: ansible-runner is not installed (" + demo.InstallHint + ")")
		}
		realPlaybook = true
	case "off":
	default:
		return fmt.Errorf("-ansible %q: want auto, on or off", *useAnsible)
	}

	// Exporters from OTEL_LOGS_EXPORTER (json, pretty, otlp, ...); Setup
	// also installs the default propagator and the tracectx processor.
	var opts []otelbridge.Option
	if out != nil {
		opts = append(opts, otelbridge.WithWriter(out))
	}
	tel, err := otelbridge.Setup(ctx, opts...)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		// A telemetry error is reported, never the driver's status
		// (docs/configuration.md).
		if serr := tel.Shutdown(sctx); serr != nil {
			fmt.Fprintln(os.Stderr, "http-driver: telemetry:", serr)
		}
	}()

	life, endLife := context.WithCancel(context.Background())
	defer endLife()
	d := &driver{
		log:   otelslog.NewLogger("github.com/progressotel/progressotel/examples/http-driver"),
		steps: *steps, stepDelay: *stepDelay, ansible: realPlaybook, life: life,
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: d.handler(), ReadHeaderTimeout: 10 * time.Second}
	d.log.InfoContext(ctx, "listening", "addr", ln.Addr().String(), "path", ExecutePath, "realPlaybook", realPlaybook)
	if ready != nil {
		ready <- ln.Addr().String()
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}

	d.log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	if err := d.wait(sctx); err != nil {
		// Stop what still runs (a playbook gets SIGTERM, then SIGKILL
		// after its grace period) rather than leave it behind.
		endLife()
		wctx, cancel := context.WithTimeout(context.Background(), ansible.DefaultGracePeriod+5*time.Second)
		defer cancel()
		return errors.Join(err, d.wait(wctx))
	}
	return nil
}
