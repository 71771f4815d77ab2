package prettyexporter_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/log/logtest"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/prettyexporter"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

func newPretty(t testing.TB, opts ...prettyexporter.Option) (*prettyexporter.Exporter, *testutil.SyncBuffer) {
	t.Helper()
	var buf testutil.SyncBuffer
	base := []prettyexporter.Option{prettyexporter.WithWriter(&buf), prettyexporter.WithoutTime(), prettyexporter.WithColor(prettyexporter.ColorNever)}
	exp, err := prettyexporter.New(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return exp, &buf
}

func TestPrettyProgressEvent(t *testing.T) {
	exp, buf := newPretty(t)
	h := newHarness(t, exp)
	ctx, span := h.span(t)
	short := span.SpanContext().TraceID().String()[:8]
	env := progress.Envelope{Resource: progress.Resource{Type: "Play", ID: "site.yml"}}
	events := []progress.Event{
		{Type: "ansible/TaskStarted", Envelope: env, Details: map[string]any{
			"taskName": "Install nginx", "args": map[string]any{"name": "nginx"}, "argsHidden": false,
			"hosts": []any{"web-1", "web 2"}, "empty": "", "quote": `say "hi"`,
		}},
		{Type: "ansible/TaskRetryOnHost", Envelope: env, Severity: log.SeverityWarn, Details: map[string]any{"hostName": "web-1"}},
		progress.OperationFailed("Install", "INTERNAL_ERROR", "playbook failed"),
	}
	for _, e := range events {
		if err := h.rec.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		`INF ansible/TaskStarted  Play/site.yml  ` + short + `  tx=tx-1  args.name=nginx argsHidden=false empty="" hosts=[web-1, "web 2"] quote="say \"hi\"" taskName="Install nginx"`,
		`WRN ansible/TaskRetryOnHost  Play/site.yml  ` + short + `  tx=tx-1  hostName=web-1`,
		`ERR common/OperationFailed  ` + short + `  tx=tx-1  description="playbook failed" failureCode=INTERNAL_ERROR operation=Install error.type=INTERNAL_ERROR`,
	}
	got := lines(buf.String())
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("pretty lines\n got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestPrettyTransition(t *testing.T) {
	exp, buf := newPretty(t)
	h := newHarness(t, exp)
	ctx, span := h.span(t)
	short := span.SpanContext().TraceID().String()[:8]
	env := progress.Envelope{Resource: progress.Resource{Type: "Cluster", ID: "foo", Namespace: "ns-1"}, ObservedGeneration: 3}
	if err := h.rec.RecordTransition(ctx, progress.Transition{
		Stream: progress.StreamProvisioning, Condition: progress.Condition{Status: "Provisioning"}, Envelope: env,
	}); err != nil {
		t.Fatal(err)
	}
	if err := h.rec.RecordTransition(ctx, progress.Transition{
		Stream:    progress.StreamProvisioning,
		Condition: progress.Condition{Status: "Provisioned", Reason: "Ready", Message: "cluster is up"},
		Previous:  &progress.Condition{Status: "Provisioning"},
		Envelope:  env,
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`INF provisioning  Cluster/foo  Provisioning  ` + short + `  tx=tx-1  namespace=ns-1 generation=3`,
		`INF provisioning  Cluster/foo  Provisioning → Provisioned (Ready) "cluster is up"  ` + short + `  tx=tx-1  namespace=ns-1 generation=3`,
	}
	if got := lines(buf.String()); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("transition lines\n got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestPrettyOrdinaryLog(t *testing.T) {
	exp, buf := newPretty(t)
	h := newHarness(t, exp)
	ctx, span := h.span(t)
	short := span.SpanContext().TraceID().String()[:8]
	logger := slog.New(otelslog.NewHandler("example.com/driver", otelslog.WithLoggerProvider(h.lp)))
	logger.WarnContext(ctx, "connect failed", "host", "db-1", slog.Group("retry", "n", 2, "after", "1s"))
	logger.Debug("hidden? no: the SDK has no level filter here")
	logger.Info("plain")
	want := []string{
		`WRN connect failed  ` + short + `  tx=tx-1  host=db-1 retry.after=1s retry.n=2`,
		`DBG hidden? no: the SDK has no level filter here`,
		`INF plain`,
	}
	if got := lines(buf.String()); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("log lines\n got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestPrettyTime(t *testing.T) {
	var buf bytes.Buffer
	exp, _ := prettyexporter.New(prettyexporter.WithWriter(&buf), prettyexporter.WithTimeLayout("2006-01-02"), prettyexporter.WithColor(prettyexporter.ColorNever))
	ts := testTime()
	rec := logtest.RecordFactory{Timestamp: ts, Severity: log.SeverityInfo, Body: attribute.StringValue("x")}.NewRecord()
	if err := exp.Export(context.Background(), []sdklog.Record{rec}); err != nil {
		t.Fatal(err)
	}
	if want := ts.Local().Format("2006-01-02") + " INF x\n"; buf.String() != want {
		t.Errorf("got %q want %q", buf.String(), want)
	}
}

// hostile holds ANSI escapes, C0 and C1 controls, DEL, a bidi override,
// invalid UTF-8 and a newline that would forge a second log line.
const hostile = "a\x1b[31mred\x1b]0;title\x07\r\nINF forged\x7f\u009b2J\u202e\xff"

func TestPrettyEscapesEverything(t *testing.T) {
	for _, color := range []prettyexporter.ColorMode{prettyexporter.ColorNever, prettyexporter.ColorAlways} {
		t.Setenv("NO_COLOR", "")
		exp, buf := newPretty(t, prettyexporter.WithColor(color))
		attrs := []attribute.KeyValue{
			attribute.String(wire.AttrEventType, wire.EventType),
			attribute.String(wire.AttrResourceType, hostile),
			attribute.String(wire.AttrResourceID, hostile),
			attribute.String(wire.DetailsPrefix+hostile, hostile),
			attribute.StringSlice(wire.DetailsPrefix+"list", []string{hostile, "ok"}),
			attribute.String(wire.TraceCtxPrefix+"transactionid", hostile),
			attribute.String(hostile, hostile),
		}
		recs := []sdklog.Record{
			logtest.RecordFactory{EventName: hostile, Attributes: attrs}.NewRecord(),
			logtest.RecordFactory{EventName: hostile, Body: attribute.StringValue(hostile), Attributes: []attribute.KeyValue{attribute.String(hostile, hostile)}}.NewRecord(),
			logtest.RecordFactory{EventName: hostile, Attributes: []attribute.KeyValue{
				attribute.String(wire.AttrEventType, wire.TransitionEventType),
				attribute.String("progress."+hostile+".status", hostile),
				attribute.String("progress."+hostile+".reason", hostile),
				attribute.String("progress."+hostile+".message", hostile),
				attribute.String("progress."+hostile+".previous.status", hostile),
			}}.NewRecord(),
		}
		if err := exp.Export(context.Background(), recs); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if n := strings.Count(out, "\n"); n != len(recs) {
			t.Fatalf("colour %v: %d newlines for %d records:\n%s", color, n, len(recs), out)
		}
		if err := checkSafe(out, color == prettyexporter.ColorAlways); err != nil {
			t.Errorf("colour %v: %v in\n%q", color, err, out)
		}
		if !strings.Contains(out, `\x1b[31m`) || !strings.Contains(out, `\u202e`) || !strings.Contains(out, `\r\n`) {
			t.Errorf("colour %v: escapes not shown as text:\n%s", color, out)
		}
	}
}

func TestColor(t *testing.T) {
	dir := t.TempDir()
	file, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	cases := []struct {
		name    string
		w       any
		mode    prettyexporter.ColorMode
		noColor string
		term    string
		want    bool
	}{
		{"buffer auto", &bytes.Buffer{}, prettyexporter.ColorAuto, "", "xterm", false},
		{"regular file auto", file, prettyexporter.ColorAuto, "", "xterm", false},
		{"/dev/null auto: a character device, not a terminal", devNull, prettyexporter.ColorAuto, "", "xterm", false},
		{"char device, TERM=dumb", devNull, prettyexporter.ColorAuto, "", "dumb", false},
		{"char device, NO_COLOR", devNull, prettyexporter.ColorAuto, "1", "xterm", false},
		{"always", &bytes.Buffer{}, prettyexporter.ColorAlways, "", "xterm", true},
		{"always, NO_COLOR wins", &bytes.Buffer{}, prettyexporter.ColorAlways, "1", "xterm", false},
		{"never on a char device", devNull, prettyexporter.ColorNever, "", "xterm", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", c.noColor)
			t.Setenv("TERM", c.term)
			exp, err := prettyexporter.New(prettyexporter.WithWriter(c.w.(interface{ Write([]byte) (int, error) })), prettyexporter.WithColor(c.mode))
			if err != nil {
				t.Fatal(err)
			}
			if exp.Colored() != c.want {
				t.Errorf("Colored() = %v, want %v", exp.Colored(), c.want)
			}
			if buf, ok := c.w.(*bytes.Buffer); ok {
				rec := logtest.RecordFactory{EventName: "ansible/TaskStarted", Severity: log.SeverityError, Attributes: []attribute.KeyValue{
					attribute.String(wire.AttrEventType, wire.EventType), attribute.Int(wire.DetailsPrefix+"n", 1)}}.NewRecord()
				if err := exp.Export(context.Background(), []sdklog.Record{rec}); err != nil {
					t.Fatal(err)
				}
				if got := strings.Contains(buf.String(), "\x1b["); got != c.want {
					t.Errorf("escape codes written = %v, want %v: %q", got, c.want, buf.String())
				}
				if err := checkSafe(buf.String(), c.want); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

func TestColoredLine(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	exp, buf := newPretty(t, prettyexporter.WithColor(prettyexporter.ColorAlways))
	rec := logtest.RecordFactory{EventName: "ansible/TaskStarted", Severity: log.SeverityWarn, Attributes: []attribute.KeyValue{
		attribute.String(wire.AttrEventType, wire.EventType), attribute.Int(wire.DetailsPrefix+"n", 1)}}.NewRecord()
	if err := exp.Export(context.Background(), []sdklog.Record{rec}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	// The level is marked, the group has a colour of its own and the
	// name is bold; stripping the codes leaves the plain line.
	for _, want := range []string{"\x1b[1;33mWRN\x1b[0m", "ansible/\x1b[0m\x1b[1mTaskStarted\x1b[0m"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in %q", want, out)
		}
	}
	if got := sgr.ReplaceAllString(out, ""); got != "WRN ansible/TaskStarted  n=1\n" {
		t.Errorf("without codes: %q", got)
	}
}

func TestShutdown(t *testing.T) {
	for name, mk := range exporters() {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			bw := bufio.NewWriterSize(&buf, 1<<16)
			exp := mk(bw)
			rec := logtest.RecordFactory{Body: attribute.StringValue("x"), Severity: log.SeverityInfo}.NewRecord()
			if err := exp.Export(context.Background(), []sdklog.Record{rec}); err != nil {
				t.Fatal(err)
			}
			if buf.Len() != 0 {
				t.Fatal("bufio wrote early; the test needs a buffered writer")
			}
			if err := exp.ForceFlush(context.Background()); err != nil {
				t.Fatal(err)
			}
			n := buf.Len()
			if n == 0 {
				t.Fatal("ForceFlush did not flush the buffered writer")
			}
			if err := exp.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := exp.Export(context.Background(), []sdklog.Record{rec}); !errors.Is(err, sdklog.ErrExporterShutdown) {
				t.Errorf("Export after Shutdown = %v, want ErrExporterShutdown", err)
			}
			if err := bw.Flush(); err != nil || buf.Len() != n {
				t.Errorf("Export after Shutdown wrote %d bytes", buf.Len()-n)
			}
			if err := exp.Shutdown(context.Background()); err != nil {
				t.Errorf("second Shutdown = %v", err)
			}
			if err := exp.ForceFlush(context.Background()); err != nil {
				t.Errorf("ForceFlush after Shutdown = %v", err)
			}
		})
	}
}

func TestCancelledContext(t *testing.T) {
	for name, mk := range exporters() {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			exp := mk(&buf)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			rec := logtest.RecordFactory{Body: attribute.StringValue("x")}.NewRecord()
			if err := exp.Export(ctx, []sdklog.Record{rec}); !errors.Is(err, context.Canceled) {
				t.Errorf("Export = %v, want context.Canceled", err)
			}
			if err := exp.ForceFlush(ctx); !errors.Is(err, context.Canceled) {
				t.Errorf("ForceFlush = %v, want context.Canceled", err)
			}
			if buf.Len() != 0 {
				t.Errorf("wrote %q with a cancelled context", buf.String())
			}
		})
	}
}

// TestConcurrent runs Export, ForceFlush and finally Shutdown from many
// goroutines (run it with -race). Every line arrives whole.
func TestConcurrent(t *testing.T) {
	for name, mk := range exporters() {
		t.Run(name, func(t *testing.T) {
			var buf testutil.SyncBuffer
			exp := mk(&buf)
			h := newHarness(t, exp)
			ctx, _ := h.span(t)
			const workers, per = 8, 50
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range per {
						_ = h.rec.Record(ctx, progress.Event{Type: "ansible/TaskStartedOnHost",
							Details: map[string]any{"worker": w, "i": i, "taskName": "t"}})
						if i%10 == 0 {
							_ = exp.ForceFlush(ctx)
						}
					}
				}()
			}
			wg.Wait()
			got := lines(buf.String())
			if len(got) != workers*per {
				t.Fatalf("%d lines, want %d", len(got), workers*per)
			}
			for _, l := range got {
				if !strings.Contains(l, "TaskStartedOnHost") {
					t.Fatalf("broken line %q", l)
				}
			}
			if name == "json" {
				parseLines(t, buf.String())
			}
		})
	}
}

func TestLargeBatch(t *testing.T) {
	// Past 256 KiB a batch is written in chunks; lines stay whole.
	for name, mk := range exporters() {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			exp := mk(&buf)
			big := strings.Repeat("x", 1000)
			recs := make([]sdklog.Record, 600)
			for i := range recs {
				recs[i] = logtest.RecordFactory{Body: attribute.StringValue(big), Severity: log.SeverityInfo}.NewRecord()
			}
			if err := exp.Export(context.Background(), recs); err != nil {
				t.Fatal(err)
			}
			got := lines(buf.String())
			if len(got) != len(recs) {
				t.Fatalf("%d lines, want %d", len(got), len(recs))
			}
			for _, l := range got {
				if !strings.Contains(l, big) {
					t.Fatalf("split line of %d bytes", len(l))
				}
			}
		})
	}
}

type exporter interface {
	sdklog.Exporter
}

func exporters() map[string]func(w interface{ Write([]byte) (int, error) }) exporter {
	return map[string]func(w interface{ Write([]byte) (int, error) }) exporter{
		"pretty": func(w interface{ Write([]byte) (int, error) }) exporter {
			e, _ := prettyexporter.New(prettyexporter.WithWriter(w))
			return e
		},
		"json": func(w interface{ Write([]byte) (int, error) }) exporter {
			e, _ := prettyexporter.NewJSON(prettyexporter.WithWriter(w))
			return e
		},
	}
}

// blockingWriter blocks every Write until release is closed.
type blockingWriter struct {
	entered chan struct{}
	release chan struct{}
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	w.entered <- struct{}{}
	<-w.release
	return len(p), nil
}

// TestStuckWriter: a writer that never returns (a full pipe, a stopped
// terminal) must not make Shutdown or a second Export hang past their
// contexts.
func TestStuckWriter(t *testing.T) {
	for name, mk := range exporters() {
		t.Run(name, func(t *testing.T) {
			w := &blockingWriter{entered: make(chan struct{}, 1), release: make(chan struct{})}
			exp := mk(w)
			rec := logtest.RecordFactory{Body: attribute.StringValue("x")}.NewRecord()
			done := make(chan error, 1)
			go func() { done <- exp.Export(context.Background(), []sdklog.Record{rec}) }()
			<-w.entered // the first Export is now stuck inside Write

			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := exp.Export(ctx, []sdklog.Record{rec}); !errors.Is(err, context.Canceled) {
				t.Errorf("second Export = %v, want context.Canceled", err)
			}
			if err := exp.Shutdown(ctx); !errors.Is(err, context.Canceled) {
				t.Errorf("Shutdown = %v, want context.Canceled", err)
			}
			close(w.release)
			if err := <-done; err != nil {
				t.Errorf("first Export = %v", err)
			}
			if err := exp.Export(context.Background(), []sdklog.Record{rec}); !errors.Is(err, sdklog.ErrExporterShutdown) {
				t.Errorf("Export after Shutdown = %v", err)
			}
		})
	}
}

func TestZeroValue(t *testing.T) {
	rec := logtest.RecordFactory{Body: attribute.StringValue("x")}.NewRecord()
	for _, exp := range []sdklog.Exporter{&prettyexporter.Exporter{}, &prettyexporter.JSONExporter{}} {
		if err := exp.Export(context.Background(), []sdklog.Record{rec}); err == nil {
			t.Errorf("%T zero value: Export succeeded", exp)
		}
		if err := exp.ForceFlush(context.Background()); err != nil {
			t.Errorf("%T zero value: ForceFlush = %v", exp, err)
		}
		if err := exp.Shutdown(context.Background()); err != nil {
			t.Errorf("%T zero value: Shutdown = %v", exp, err)
		}
	}
}
