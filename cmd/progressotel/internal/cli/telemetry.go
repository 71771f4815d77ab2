package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/rivo/uniseg"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/progressotel/progressotel/cmd/progressotel/internal/handoff"
	"github.com/progressotel/progressotel/internal/base/term"
	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/propagation"
)

// exporterSetting says what the environment configures.
type exporterSetting int

const (
	exportersUnset    exporterSetting = iota // nothing: warn, export nothing
	exportersDisabled                        // OTEL_SDK_DISABLED=true or OTEL_LOGS_EXPORTER=none: export nothing, quietly
	exportersSet                             // OTEL_LOGS_EXPORTER or an OTLP endpoint
)

// exporters reads the environment as otelbridge.Setup does, to tell whether
// anything is configured: Setup's own default suits a program, not a
// wrapper whose stdout is the child's.
func exporters() exporterSetting {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		return exportersDisabled
	}
	switch v := strings.TrimSpace(os.Getenv("OTEL_LOGS_EXPORTER")); {
	case strings.EqualFold(v, otelbridge.ExporterNone):
		return exportersDisabled
	case v != "":
		return exportersSet
	}
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT") != "" {
		return exportersSet
	}
	return exportersUnset
}

const noExporterWarning = "no exporter configured (set OTEL_LOGS_EXPORTER, or OTEL_EXPORTER_OTLP_ENDPOINT for a collector): nothing is exported"

// telemetry is what a command set up: the SDK and its local output.
type telemetry struct {
	tel    *otelbridge.Telemetry
	output *os.File // --output, closed by shutdown
}

// setupTelemetry sets up the SDK for a command; export false: with no
// exporter (a run still needs real span ids for its child). The SDK's
// errors (failed exports) are printed on stderr, a few at most.
func setupTelemetry(ctx context.Context, o *commonOptions, export, spans bool, stderr io.Writer, extra ...otelbridge.Option) (*telemetry, error) {
	otel.SetErrorHandler(&errorPrinter{w: stderr, left: 3})
	name := cmp.Or(o.envelope.env.Component.Name, "progressotel")
	opts := []otelbridge.Option{
		otelbridge.WithResource(resource.NewSchemaless(attribute.String("service.name", name))),
	}
	if !export {
		opts = append(opts, otelbridge.WithExporters(otelbridge.ExporterNone))
	}
	if !spans {
		opts = append(opts, otelbridge.WithoutTracerProvider())
	}
	t := &telemetry{}
	if o.output != "" && export {
		f, err := os.OpenFile(o.output, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("--output: %w", err)
		}
		t.output = f
		opts = append(opts, otelbridge.WithWriter(f))
	}
	tel, err := otelbridge.Setup(ctx, append(opts, extra...)...)
	if err != nil {
		if t.output != nil {
			_ = t.output.Close()
		}
		return nil, err
	}
	t.tel = tel
	return t, nil
}

// shutdown flushes within timeout, or until ctx ends (a signal after the
// child's exit), and reports on stderr what could not be exported.
func (t *telemetry) shutdown(ctx context.Context, stderr io.Writer) {
	if t == nil {
		return
	}
	err := t.tel.Shutdown(ctx)
	if t.output != nil {
		_ = t.output.Close()
	}
	var lost *sdkparts.LostRecordsError
	switch {
	case err == nil:
		if st := t.tel.Stats(); st.Dropped > 0 {
			warnf(stderr, "telemetry: %d records lost (%d queue full, %d export failed), %d of them reported in the stream", st.Dropped, st.QueueFull, st.ExportFailed, st.Reported)
		}
	case errors.As(err, &lost):
		st := t.tel.Stats()
		warnf(stderr, "telemetry: %d records lost (%d not flushed before the shutdown deadline): %v", st.Dropped, st.Shutdown+lost.Unflushed, err)
	default:
		warnf(stderr, "telemetry: shutdown: %v", err)
	}
}

// commandOutput is where a run's command and progressotel's own warnings
// write during the run: through the live view's Output when the view draws
// on progressotel's stderr, so that each line is printed above the live
// area (stdout too when it is that terminal; redirected, it stays as it
// is). Without the live view, or with --output, unchanged. (The command
// then writes to a pipe: OTEL_LOGS_EXPORTER=pretty gives it the terminal.)
func (t *telemetry) commandOutput(s stdio) (stdout, stderr io.Writer) {
	live := t.tel.Output()
	_, jsonLines := live.(interface{ JSONLines() bool }) // json's Output, not a view: streams as they are
	if t.output != nil || live == io.Writer(os.Stderr) || jsonLines || s.stderr != io.Writer(os.Stderr) {
		return s.stdout, s.stderr
	}
	stdout = s.stdout
	if s.stdout == io.Writer(os.Stdout) && term.IsTerminal(os.Stdout) {
		stdout = live
	}
	return stdout, live
}

// contextFromEnv returns ctx with the trace context, baggage and tracectx
// of the environment (TRACEPARENT, TRACESTATE, BAGGAGE, X_TRACECTX_*) and
// the --tracectx values, which win.
func contextFromEnv(ctx context.Context, tracectx pairs) context.Context {
	ctx = propagation.Default().Extract(ctx, propagation.EnvCarrier{})
	for _, p := range tracectx {
		ctx, _ = propagation.WithValue(ctx, p.key, p.value) // checked by commonOptions.check
	}
	return ctx
}

// errorPrinter prints the first few errors of the OpenTelemetry SDK and
// says when it stops: in a collector outage every export fails.
type errorPrinter struct {
	mu    sync.Mutex
	w     io.Writer
	left  int
	muted bool
}

func (p *errorPrinter) Handle(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.left > 0:
		p.left--
		warnf(p.w, "telemetry: %v", err)
	case !p.muted:
		p.muted = true
		warnf(p.w, "telemetry: further errors not shown; the losses are counted and reported at the end")
	}
}

func warnf(w io.Writer, format string, args ...any) {
	line := fmt.Sprintf("progressotel: "+format, args...)
	// On a terminal, or through the live view drawn on one, a line of
	// progressotel's own is cut to the width, as the view's lines are.
	if f, ok := w.(*os.File); !ok || f == os.Stderr {
		if width, _, ok := term.Size(os.Stderr); ok && term.IsTerminal(os.Stderr) && !strings.Contains(line, "\n") {
			line = cutToWidth(line, width-1)
		}
	}
	fmt.Fprintln(w, line)
}

// cutToWidth cuts s to at most width columns, ending it with "…" when cut.
func cutToWidth(s string, width int) string {
	if width < 1 || uniseg.StringWidth(s) <= width {
		return s
	}
	var b strings.Builder
	used := 0
	g := uniseg.NewGraphemes(s)
	for g.Next() {
		if used+g.Width() > width-1 {
			break
		}
		b.WriteString(g.Str())
		used += g.Width()
	}
	return b.String() + "…"
}

// A run inside a run hands the start and end of its spans to the
// enclosing run over the socket its emits use, so that the enclosing run's
// live view shows them as rows of its own tree. The nested run still
// exports its spans itself.

// nestedExporters returns, inside an enclosing run (its socket in the
// environment) and without --output, the exporters of OTEL_LOGS_EXPORTER
// but the live view (or its CI format): the enclosing run's view shows the nested run's spans,
// while the nested run's own view, on a pipe to it, could only print plain
// lines through it. The other exporters stay. ok is false when nothing
// changes.
func nestedExporters(o *commonOptions) (names []string, ok bool) {
	env := os.Getenv("OTEL_LOGS_EXPORTER")
	if os.Getenv(handoff.EnvSocket) == "" || o.output != "" {
		return nil, false
	}
	for _, n := range strings.Split(env, ",") {
		if n = strings.TrimSpace(n); isView(n) {
			ok = true
		} else if n != "" {
			names = append(names, n)
		}
	}
	if !ok {
		return nil, false
	}
	if len(names) == 0 {
		names = []string{otelbridge.ExporterNone}
	}
	return names, true
}

// isView reports whether the exporter name is one of the live view's
// drawings of a tree: the live view itself, or its CI format.
func isView(name string) bool {
	return strings.EqualFold(name, otelbridge.ExporterLive) || strings.EqualFold(name, otelbridge.ExporterCI)
}

// singleEventExporters is OTEL_LOGS_EXPORTER for an emit or transition
// outside a run: the live view's tree is an operation's, and one event
// would draw a tree of one line, so the event is shown as the pretty
// exporter's line instead. ok is false when nothing changes.
func singleEventExporters() (names []string, ok bool) {
	for _, n := range strings.Split(os.Getenv("OTEL_LOGS_EXPORTER"), ",") {
		switch n = strings.TrimSpace(n); {
		case isView(n):
			ok = true
			n = otelbridge.ExporterPretty
		case n == "":
			continue
		}
		if !slices.ContainsFunc(names, func(m string) bool { return strings.EqualFold(m, n) }) {
			names = append(names, n)
		}
	}
	return names, ok
}
