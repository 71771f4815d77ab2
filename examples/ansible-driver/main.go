// Command ansible-driver simulates an Ansible lifecycle driver running an
// Install playbook and reports it live as progress events, exactly as the
// real Ansible driver names them, with no Ansible needed.
//
// It runs one lifecycle transition inside a span, one child span per task,
// and takes its exporters from OTEL_LOGS_EXPORTER through otelbridge.Setup:
//
//	go run ./examples/ansible-driver                          # pretty on a terminal, else JSON lines
//	OTEL_LOGS_EXPORTER=json go run ./examples/ansible-driver  # JSON lines on stdout
//	OTEL_LOGS_EXPORTER=otlp OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 go run ./examples/ansible-driver
//
// The OTLP endpoint above is a collector's OTLP/HTTP port; for its gRPC
// port (4317) add OTEL_EXPORTER_OTLP_PROTOCOL=grpc. The service name
// defaults to ansible-driver; OTEL_SERVICE_NAME renames it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/propagation"
)

func main() {
	delay := flag.Duration("delay", 40*time.Millisecond, "pause between tasks, to watch progress live")
	tenant := flag.String("tenant", "tenant-a", "tenant id of the simulated request (x-tracectx-TenantId)")
	flag.Parse()
	if err := run(*delay, *tenant); err != nil {
		fmt.Fprintln(os.Stderr, "ansible-driver:", err)
		os.Exit(1)
	}
}

// run sets up the event log service and runs the playbook; opts are added
// to Setup's (tests send the output to a buffer).
func run(delay time.Duration, tenant string, opts ...otelbridge.Option) error {
	ctx := context.Background()
	opts = append([]otelbridge.Option{otelbridge.WithResource(resource.NewSchemaless(
		attribute.String("service.name", "ansible-driver")))}, opts...)
	tel, err := otelbridge.Setup(ctx, opts...)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tel.Shutdown(sctx); err != nil {
			fmt.Fprintln(os.Stderr, "ansible-driver:", err)
		}
	}()

	// The request's tracectx, as TNCO sends it in x-tracectx-* headers.
	ctx = withTraceCtx(ctx, map[string]string{
		"transactionid": "7d9b1c52-tx", "processid": "proc-42", "taskid": "task-1", "tenantid": tenant,
		"driverrequestid": "drv-0001",
	})
	return runPlaybook(ctx, delay)
}

func withTraceCtx(ctx context.Context, kv map[string]string) context.Context {
	for k, v := range kv {
		next, err := propagation.WithValue(ctx, k, v)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ansible-driver: tracectx:", err)
			continue
		}
		ctx = next
	}
	return ctx
}

// Details of the real Ansible driver's events (see CONTEXT.md): typed
// structs, encoded by their json tags.
type (
	taskStarted struct {
		TaskName   string         `json:"taskName"`
		Args       map[string]any `json:"args,omitempty"`
		ArgsHidden bool           `json:"argsHidden"`
	}
	taskOnHost struct {
		TaskName          string      `json:"taskName"`
		ItemLabel         string      `json:"itemLabel,omitempty"`
		HostName          string      `json:"hostName"`
		DelegatedHostName string      `json:"delegatedHostName,omitempty"`
		Args              any         `json:"args,omitempty"`
		ArgsHidden        *bool       `json:"argsHidden,omitempty"`
		TaskResult        *taskResult `json:"taskResult,omitempty"`
	}
	// taskResult is reduced so that no sensitive data leaks.
	taskResult struct {
		Msg     string `json:"msg,omitempty"`
		Changed bool   `json:"changed"`
		Failed  bool   `json:"failed"`
		Skipped bool   `json:"skipped"`
		RC      *int   `json:"rc,omitempty"`
		Results []any  `json:"results,omitempty"`
	}
	hostStats struct {
		OK          int `json:"ok"`
		Changed     int `json:"changed"`
		Failures    int `json:"failures"`
		Skipped     int `json:"skipped"`
		Unreachable int `json:"unreachable"`
	}
)

type task struct {
	name    string
	args    map[string]any
	noLog   bool
	retry   string // host that needs one retry
	failOn  string // host whose failure is ignored
	changes bool   // the task changes the hosts when it succeeds
}

var (
	hosts    = []string{"web-1", "web-2"}
	play     = "Install nginx on web tier"
	playbook = []task{
		{name: "Gather facts"},
		{name: "Install nginx", args: map[string]any{"name": "nginx", "state": "present"}, retry: "web-2", changes: true},
		{name: "Write database credentials", args: map[string]any{"dest": "/etc/app/db.conf", "db_password": "s3cr3t"}, noLog: true, changes: true},
		{name: "Template site config", args: map[string]any{"src": "site.j2", "dest": "/etc/nginx/conf.d/site.conf", "api_token": "tok-123"}, changes: true},
		{name: "Probe optional module", args: map[string]any{"name": "nginx-mod-extra"}, failOn: "web-1"},
		{name: "Start nginx", args: map[string]any{"name": "nginx", "state": "started"}, changes: true},
	}
)

func runPlaybook(ctx context.Context, delay time.Duration) error {
	tracer := otel.Tracer("github.com/progressotel/progressotel/examples/ansible-driver")
	env := progress.Envelope{
		Component: progress.Component{Name: "ansible-lifecycle-driver", Version: "3.4.0"},
		Resource:  progress.Resource{Type: "resource::nginx::1.0", ID: "nginx-web-tier"},
	}
	record := func(ctx context.Context, evt progress.Event) {
		evt.Envelope = env
		if err := progress.Record(ctx, evt); err != nil {
			// Telemetry never stops the driver: report and go on.
			fmt.Fprintln(os.Stderr, "ansible-driver: progress:", err)
		}
	}

	ctx, span := tracer.Start(ctx, "Install", trace.WithAttributes(attribute.String("lifecycle.transition", "Install")))
	defer span.End()
	start := time.Now()

	record(ctx, progress.OperationStarted("Install"))
	record(ctx, progress.Event{Type: "ansible/PlayStarted", Details: map[string]any{"playName": play}})

	stats := map[string]*hostStats{}
	for _, h := range hosts {
		stats[h] = &hostStats{}
	}
	for i, t := range playbook {
		runTask(ctx, tracer, record, t, stats)
		record(ctx, progress.Progress(int64(i+1), int64(len(playbook)), "tasks"))
		time.Sleep(delay)
	}

	hs := map[string]any{}
	for h, s := range stats {
		hs[h] = s
	}
	record(ctx, progress.Event{Type: "ansible/PlaybookResult", Details: map[string]any{
		"plays":     []any{map[string]any{"play": map[string]any{"name": play, "id": "5a1f0c3e-play-1"}}},
		"hostStats": hs,
	}})
	record(ctx, progress.OperationCompleted("Install", time.Since(start)))
	span.SetStatus(codes.Ok, "")
	return nil
}

func runTask(ctx context.Context, tracer trace.Tracer, record func(context.Context, progress.Event), t task, stats map[string]*hostStats) {
	ctx, span := tracer.Start(ctx, t.name)
	defer span.End()

	started := taskStarted{TaskName: t.name, Args: t.args}
	if t.noLog {
		// Ansible no_log: the arguments never leave the driver.
		started.Args, started.ArgsHidden = nil, true
	}
	record(ctx, progress.Event{Type: "ansible/TaskStarted", Details: started})

	rc0 := 0
	for _, h := range hosts {
		onHost := taskOnHost{TaskName: t.name, HostName: h}
		if t.noLog {
			hidden := true
			onHost.ArgsHidden = &hidden
		} else if t.args != nil {
			onHost.Args = t.args
		}
		record(ctx, progress.Event{Type: "ansible/TaskStartedOnHost", Details: onHost})
		onHost.Args, onHost.ArgsHidden = nil, nil

		if h == t.retry {
			onHost.TaskResult = &taskResult{Msg: "Failed to lock apt for exclusive operation", Failed: true, RC: intPtr(100)}
			record(ctx, progress.Event{Type: "ansible/TaskRetryOnHost", Severity: log.SeverityWarn, Details: onHost})
		}
		if h == t.failOn {
			onHost.TaskResult = &taskResult{Msg: "No package matching 'nginx-mod-extra' is available (ignored)", Failed: true, RC: intPtr(1)}
			record(ctx, progress.Event{Type: "ansible/TaskFailedOnHost", Severity: log.SeverityWarn, Details: onHost})
			stats[h].Failures++
			continue
		}
		changed := t.changes
		onHost.TaskResult = &taskResult{Changed: changed, RC: &rc0}
		if t.noLog {
			onHost.TaskResult.Msg = "the output has been hidden due to the fact that 'no_log: true' was specified for this result"
		}
		record(ctx, progress.Event{Type: "ansible/TaskCompletedOnHost", Details: onHost})
		stats[h].OK++
		if changed {
			stats[h].Changed++
		}
	}
}

func intPtr(i int) *int { return &i }
