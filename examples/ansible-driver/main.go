// Command ansible-driver is an Ansible lifecycle driver running an Install
// playbook and reporting it live as progress events, exactly as the real
// Ansible driver names them, through the ansible adapter.
//
// With Ansible installed it runs the real playbook (two web hosts, both
// this machine over the local connection); without it, it replays a
// recorded real run of the same playbook through the same decoder, and
// says so in one line. Either way there is one span for the transition,
// and the adapter's playbook, play, task and host spans under it.
//
//	go run ./examples/ansible-driver                          # the live view on a terminal, else JSON lines
//	OTEL_LOGS_EXPORTER=json go run ./examples/ansible-driver  # JSON lines on stderr, its notices as JSON lines too
//	go run ./examples/ansible-driver -replay                  # the recorded run, even with Ansible
//	OTEL_LOGS_EXPORTER=otlp OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 go run ./examples/ansible-driver
//
// The OTLP endpoint above is a collector's OTLP/HTTP port; for its gRPC
// port (4317) add OTEL_EXPORTER_OTLP_PROTOCOL=grpc. The service name
// defaults to ansible-driver; OTEL_SERVICE_NAME renames it.
//
// Install Ansible for the live run:
//
//	apt-get install --no-install-recommends ansible-core python3-ansible-runner
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/ansible"
	"github.com/progressotel/progressotel/examples/internal/demo"
	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/propagation"
)

// options are the command's flags.
type options struct {
	tenant string
	replay bool          // even when Ansible is installed
	delay  time.Duration // replay: longest pause between two events
	notice io.Writer     // nil: the telemetry's Output (above the live view)
}

func main() {
	var o options
	flag.StringVar(&o.tenant, "tenant", "tenant-a", "tenant id of the simulated request (x-tracectx-TenantId)")
	flag.BoolVar(&o.replay, "replay", false, "replay the recorded real run even when Ansible is installed")
	flag.DurationVar(&o.delay, "delay", 300*time.Millisecond, "replay: the longest pause between two events, to watch it unfold (0: none)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "ansible-driver:", err)
		os.Exit(1)
	}
}

// run sets up the event log service and runs (or replays) the playbook;
// opts are added to Setup's (tests send the output to a buffer).
func run(ctx context.Context, o options, opts ...otelbridge.Option) error {
	opts = append([]otelbridge.Option{otelbridge.WithResource(resource.NewSchemaless(
		attribute.String("service.name", "ansible-driver")))}, opts...)
	tel, err := otelbridge.Setup(ctx, opts...)
	if err != nil {
		return err
	}
	if o.notice == nil {
		o.notice = tel.Output() // on a terminal, the live view owns stderr
	}
	defer func() {
		// A telemetry error is reported, never the run's status: the
		// playbook's outcome is the driver's answer (docs/configuration.md).
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if serr := tel.Shutdown(sctx); serr != nil {
			fmt.Fprintln(o.notice, "ansible-driver: telemetry:", serr)
		}
	}()

	// The request's tracectx, as TNCO sends it in x-tracectx-* headers.
	ctx = withTraceCtx(ctx, o.notice, map[string]string{
		"transactionid": "7d9b1c52-tx", "processid": "proc-42", "taskid": "task-1", "tenantid": o.tenant,
		"driverrequestid": "drv-0001",
	})
	ctx, span := otel.Tracer("github.com/progressotel/progressotel/examples/ansible-driver").Start(ctx, "Install",
		trace.WithAttributes(attribute.String("lifecycle.transition", "Install")))
	defer span.End()

	adapter := []ansible.Option{
		adapter.WithLogger(slog.New(slog.NewTextHandler(o.notice, nil))),
		adapter.WithOperation("Install"),
		adapter.WithEnvelope(progress.Envelope{
			Component: progress.Component{Name: "ansible-lifecycle-driver", Version: "3.4.0"},
			Resource:  progress.Resource{Type: "resource::nginx::1.0", ID: "nginx-web-tier"},
		}),
	}
	var res ansible.Result
	if !o.replay && demo.Installed() {
		fmt.Fprintln(o.notice, "ansible-driver: running the real playbook "+demo.PlaybookName+" (ansible-runner)")
		res, err = demo.Run(ctx, "ansible-driver-", adapter...)
	} else {
		// Each line within 80 columns: the first lines a newcomer reads.
		if o.replay {
			fmt.Fprintf(o.notice, "ansible-driver: replaying a recorded real run of %s (-replay)\n", demo.PlaybookName)
		} else {
			fmt.Fprintf(o.notice, "ansible-driver: no Ansible: replaying a recorded real run of %s\n  %s\n",
				demo.PlaybookName, demo.InstallHint)
		}
		res, err = ansible.Stream(ctx, demo.Paced(o.delay), adapter...)
	}
	if err != nil {
		span.SetStatus(codes.Error, "the playbook failed")
		return err
	}
	// The operation's span ended and flushed first, so that the recap comes after the run's
	// final state.
	span.SetStatus(codes.Ok, "")
	span.End()
	_ = tel.ForceFlush(ctx)
	fmt.Fprintf(o.notice, "ansible-driver: done: %d Ansible events\n%s", res.Events, recap(res.Stats))
	return nil
}

// recap is Ansible's recap, a line per host, so that no line is wider
// than a terminal's for any number of hosts.
func recap(stats map[string]ansible.HostStats) string {
	var b strings.Builder
	for _, h := range slices.Sorted(maps.Keys(stats)) {
		s := stats[h]
		fmt.Fprintf(&b, "  %s ok=%d changed=%d failed=%d skipped=%d unreachable=%d ignored=%d\n",
			h, s.OK, s.Changed, s.Failures, s.Skipped, s.Unreachable, s.Ignored)
	}
	return b.String()
}

func withTraceCtx(ctx context.Context, notice io.Writer, kv map[string]string) context.Context {
	for k, v := range kv {
		next, err := propagation.WithValue(ctx, k, v)
		if err != nil {
			fmt.Fprintln(notice, "ansible-driver: tracectx:", err) // through the live view while it runs
			continue
		}
		ctx = next
	}
	return ctx
}
