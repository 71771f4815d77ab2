package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log"
	lognoop "go.opentelemetry.io/otel/log/noop"
	otelprop "go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/progressotel/progressotel/cmd/progressotel/internal/handoff"
	"github.com/progressotel/progressotel/internal/kit/procctl"
	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
	"github.com/progressotel/progressotel/propagation"
)

// ScopeName is the instrumentation scope of the run's span.
const ScopeName = "github.com/progressotel/progressotel/cmd/progressotel"

// DefaultFailureCode is the failureCode of OperationFailed when the
// command fails: Ignition's code for a failure it cannot tell more about.
const DefaultFailureCode = progress.FailureInternal

type runOptions struct {
	commonOptions
	operation, failureCode, adapter, linesType string
	lines, recordArgs                          bool
}

func newRunFlags() (*flag.FlagSet, *runOptions) {
	o := &runOptions{}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.StringVar(&o.operation, "operation", "", "the operation's `name`: the span's name and the operation of the common events, such as Install (default: the command's name)")
	fs.StringVar(&o.failureCode, "failure-code", DefaultFailureCode, "the failureCode of common/OperationFailed when the command fails: an Ignition failure `code`")
	fs.StringVar(&o.adapter, "adapter", "auto", "how the command's run is reported: auto (the adapter that knows the command, else command), command or none (operation events only, and --lines), or an adapter's `name`: "+adapterNames())
	fs.BoolVar(&o.lines, "lines", false, "record each line of the command's stdout and stderr as an event (the generic adapter); the lines are still passed through")
	fs.StringVar(&o.linesType, "lines-type", DefaultLinesType, "the progressEventType of each line with --lines: a `group/Name`")
	fs.BoolVar(&o.recordArgs, "record-args", false, "record the command line on the run's span (process.command_args), redacted: each argument that looks secret, and the value after a flag with a secret name, is replaced")
	o.commonOptions.register(fs)
	return fs, o
}

// redactArgs is argv as --record-args records it: each argument through
// progress's Redactor, and the argument after a flag with a secret name
// (--password x) or the value of one (--token=x) replaced whole.
func redactArgs(argv []string) []string {
	r := progress.DefaultRedactor()
	out := make([]string, len(argv))
	secretNext := false
	for i, a := range argv {
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case secretNext:
			out[i] = wire.Redacted
		case strings.HasPrefix(a, "-") && hasValue && r.SecretKey(name):
			out[i] = a[:len(a)-len(value)] + wire.Redacted
		default:
			out[i] = r.Value(a)
		}
		secretNext = strings.HasPrefix(a, "-") && !hasValue && r.SecretKey(name)
	}
	return out
}

var runCommand = &command{
	name:     "run",
	synopsis: "run a command inside a span, as an operation with its progress events",
	usage:    "progressotel run [flags] -- COMMAND [ARGS...]",
	description: `Runs COMMAND as an operation, framed by common/OperationStarted and
common/OperationCompleted or common/OperationFailed, inside a span named
after the executable (kind CLIENT, with process.* attributes; see
--record-args). Commands an adapter knows (see --adapter) run through the
adapter's own launcher, with their own events and spans, live; any other
command gets the operation events and, with --lines, one event per output
line. No telemetry is written to stdout.

The command's environment gets the run's trace context: TRACEPARENT,
TRACESTATE, BAGGAGE and the tracectx values as X_TRACECTX_*, so that what it
starts joins the trace; and PROGRESSOTEL_SOCKET, through which 'progressotel
emit' and 'progressotel transition' hand their events to the run (one
sequence, no exporter per emit).

Exit status: the one the command would have had without progressotel.
When it was killed by a signal, progressotel kills itself with the same
signal (SIGHUP, SIGINT, SIGTERM, SIGKILL) or exits with 128+N (any other).
126 and 127 when it cannot be started or is not found, 2 for invalid
flags. Signals go to the command as if sent to it: SIGTERM, SIGHUP, SIGUSR1
and SIGUSR2 always, SIGINT and SIGQUIT when they cannot have come from the
terminal, or when the tool runs in a process group of its own (ansible,
terraform), which the terminal's Ctrl-C does not reach. A collector that is
down or hangs delays the exit by --shutdown-timeout at most.`,
	flags: func() *flag.FlagSet { fs, _ := newRunFlags(); return fs },
	env:   runEnv,
}

func runRun(ctx context.Context, args []string, stdio stdio) Status {
	// Signals first: from here on a SIGTERM is forwarded to the command,
	// not fatal to progressotel.
	sup := newSupervisor()
	defer sup.stop()

	fs, o := newRunFlags()
	if st, done := parseCommand(runCommand, fs, args, stdio); done {
		return st
	}
	argv := fs.Args()
	if len(argv) == 0 {
		return usageError(runCommand, stdio.stderr, invalidf("no command to run"))
	}
	if err := o.check(); err != nil {
		return usageError(runCommand, stdio.stderr, err)
	}
	adapter, err := chooseAdapter(o.adapter, argv)
	if err != nil {
		return usageError(runCommand, stdio.stderr, err)
	}
	if o.lines {
		if err := checkType(o.linesType); err != nil {
			return usageError(runCommand, stdio.stderr, fmt.Errorf("--lines-type: %w", err))
		}
	}
	env := o.envelope.envelope()
	ctx = contextFromEnv(ctx, o.tracectx)
	setting := exporters()
	parent := os.Getenv(handoff.EnvSocket) // inside a run: its socket
	if setting == exportersUnset && parent == "" {
		// Once per top-level run: a nested run's records go to it.
		warnf(stdio.stderr, "%s", noExporterWarning)
	}
	var extra []otelbridge.Option
	if names, ok := nestedExporters(&o.commonOptions); ok && setting == exportersSet {
		extra = append(extra, otelbridge.WithExporters(names...))
	}
	tel, err := setupTelemetry(ctx, &o.commonOptions, setting == exportersSet, true, stdio.stderr, extra...)
	if err != nil {
		warnf(stdio.stderr, "telemetry: %v: the command runs without it", err)
	}
	// With the live view on progressotel's terminal, the command's output
	// and progressotel's own warnings are printed above the live area.
	out := stdio
	var tp trace.TracerProvider = noop.NewTracerProvider()
	var localSpans sdktrace.SpanProcessor // where a nested run's spans go: the run's live view, if any
	var fwd *forwarder                    // inside a run: where the records go
	if tel != nil {
		out.stdout, out.stderr = tel.commandOutput(stdio)
		sdk := tel.tel.TracerProvider()
		if parent != "" {
			// Inside an enclosing run: this run's spans go to it too, but
			// for its CLIENT span, so that its view shows the operation by
			// the name it was given (--operation build), not sh's.
			spans := handoff.NewSpanForwarder(parent)
			spans.Collapse = func(s sdktrace.ReadOnlySpan) bool {
				return s.SpanKind() == trace.SpanKindClient && s.InstrumentationScope().Name == ScopeName
			}
			sdk.RegisterSpanProcessor(recordsFirst{SpanProcessor: spans, records: &fwd})
		}
		tp, localSpans = sdk, tel.tel.LocalSpanProcessor()
	}
	logger := slog.New(slog.NewTextHandler(out.stderr, &slog.HandlerOptions{Level: slog.LevelWarn,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}})).With("prog", "progressotel")

	// The CLI conventions' span of a command run by another: kind CLIENT,
	// named after the executable; the adapter's run span is its child.
	executable := filepath.Base(argv[0])
	attrs := []attribute.KeyValue{semconv.ProcessExecutableName(executable), attribute.String("progressotel.adapter", adapter.Name())}
	if o.recordArgs {
		attrs = append(attrs, semconv.ProcessCommandArgs(redactArgs(argv)...))
	}
	ctx, span := tp.Tracer(ScopeName, trace.WithInstrumentationVersion(wire.ScopeVersion)).Start(ctx, executable,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	rec := progress.Default()
	if parent != "" {
		// Inside a run: the records go to it, to be numbered in its
		// sequence and given its envelope for what this run leaves unset.
		var own log.LoggerProvider = lognoop.NewLoggerProvider()
		if tel != nil {
			own = tel.tel.LoggerProvider()
		}
		fwd = newForwarder(parent, own, out.stderr)
		rec = nestedRecorder(fwd)
	}

	// The socket for the child's emits; without it they export directly.
	var serving sync.WaitGroup
	srv, err := handoff.Listen("")
	if err != nil {
		warnf(out.stderr, "no socket for emits: %v", err)
	} else {
		h := &emitHandler{ctx: ctx, rec: rec, env: env}
		serving.Go(func() { _ = srv.Serve(ctx, handoff.WithSpans(h.handle, localSpans)) })
	}

	inv := &Invocation{
		Command: procctl.Command{Argv: argv, Stdin: stdio.stdin, Stderr: out.stderr, Signals: sup.Signals(),
			Started: func(pid int) { span.SetAttributes(semconv.ProcessPID(pid)) },
			// The emits the command made are recorded before its final event.
			Exited: func() { _ = srv.Close() }},
		EnvFor:    func(ctx context.Context) []string { return childEnv(ctx, os.Environ(), srv) },
		Operation: o.operation, FailureCode: o.failureCode, Envelope: progress.Envelope(env), Recorder: rec,
		TracerProvider: tp, Stdout: out.stdout, Logger: logger, Lines: LinesOptions{Enabled: o.lines, Type: o.linesType}, sup: sup,
	}
	st := adapter.Run(ctx, inv)
	sup.ended()

	// From here on a signal cuts the telemetry shutdown short.
	sctx, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
	defer cancel()
	sup.onSignalAfterExit(cancel)
	_ = srv.Close() // stops taking emits, waits for those being served
	serving.Wait()
	span.SetAttributes(semconv.ProcessExitCode(st.ExitCode()))
	if st.Signal != 0 {
		span.SetAttributes(attribute.String("process.exit.signal", signalName(st.Signal)))
	}
	if !st.OK() && !inv.completed {
		// error.type: the exit code, as the CLI conventions say.
		span.SetAttributes(semconv.ErrorTypeKey.String(strconv.Itoa(st.ExitCode())))
		span.SetStatus(codes.Error, executable+" "+st.String())
	}
	span.End()
	if fwd != nil {
		fwd.close(sctx)
	}
	tel.shutdown(sctx, stdio.stderr)
	return st
}

// childEnv is env without the trace context, tracectx and socket it may
// hold from an enclosing run, with those of ctx and srv.
func childEnv(ctx context.Context, env []string, srv *handoff.Server) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains([]string{"TRACEPARENT", "TRACESTATE", "BAGGAGE", handoff.EnvSocket}, name) ||
			strings.HasPrefix(name, propagation.EnvPrefix)
	})
	propagation.Default().Inject(ctx, propagation.EnvCarrier{SetEnv: func(k, v string) {
		out = append(out, k+"="+v)
	}})
	if srv != nil {
		out = append(out, handoff.EnvSocket+"="+srv.Path())
	}
	return out
}

// emitHandler records the events the child's emits hand over.
type emitHandler struct {
	ctx context.Context // the run's: its span, baggage and tracectx
	rec *progress.Recorder
	env envelope
}

func (h *emitHandler) handle(_ context.Context, req []byte) error {
	var m message
	if err := json.Unmarshal(req, &m); err != nil {
		return fmt.Errorf("%w: %v", handoff.ErrInvalid, err)
	}
	if m.V != protocolVersion { // not the input's fault: the emit can export the event itself
		return fmt.Errorf("message version %d, this run speaks %d", m.V, protocolVersion)
	}
	if err := m.validate(); err != nil {
		return fmt.Errorf("%w: %v", handoff.ErrInvalid, err)
	}
	// The emitter's context over the run's: the same span unless it was
	// given another TRACEPARENT, the run's tracectx plus its own.
	ctx := propagation.Default().Extract(h.ctx, otelprop.MapCarrier(m.Carrier))
	if err := m.record(ctx, h.rec, m.Envelope.inherit(h.env)); err != nil {
		return fmt.Errorf("%w: %v", handoff.ErrInvalid, err)
	}
	return nil
}
