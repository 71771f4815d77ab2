package otelbridge

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
)

func env(kv map[string]string) Option {
	return withEnv(func(k string) string { return kv[k] })
}

func stderrTerminal(is bool) Option {
	return func(c *config) { c.stderrIsTerm = func() bool { return is } }
}

func TestExporterNames(t *testing.T) {
	cases := []struct {
		env  map[string]string
		opts []Option
		want string
	}{
		{env: map[string]string{"OTEL_LOGS_EXPORTER": "json"}, want: "json"},
		{env: map[string]string{"OTEL_LOGS_EXPORTER": " Pretty , otlp,pretty"}, want: "pretty,otlp"},
		{env: map[string]string{"OTEL_LOGS_EXPORTER": "none"}, want: "none"},
		// Not a terminal (a writer is given): JSON; an OTLP endpoint alone: OTLP alone,
		// no local output unless asked for.
		{env: map[string]string{}, opts: []Option{WithWriter(&bytes.Buffer{})}, want: "json"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317"}, opts: []Option{WithWriter(&bytes.Buffer{})}, want: "otlp"},
		// Options win over the environment.
		{env: map[string]string{"OTEL_LOGS_EXPORTER": "json"}, opts: []Option{WithExporters("console")}, want: "console"},
		// In any case, as the variable (a nested run passes its names on).
		{env: map[string]string{}, opts: []Option{WithExporters("OTLP", "Json", "otlp")}, want: "otlp,json"},
		// On a terminal: the live view, unless an OTLP endpoint is set; the flat
		// lines stay as pretty.
		{env: map[string]string{}, opts: []Option{stderrTerminal(true)}, want: "live"},
		{env: map[string]string{}, opts: []Option{stderrTerminal(false)}, want: "json"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, opts: []Option{stderrTerminal(true)}, want: "otlp"},
		{env: map[string]string{"OTEL_LOGS_EXPORTER": "LIVE"}, want: "live"},
		{env: map[string]string{"OTEL_LOGS_EXPORTER": "pretty"}, opts: []Option{stderrTerminal(true)}, want: "pretty"},
		// Under CI, not on a terminal: the CI format; asked for by name anywhere.
		{env: map[string]string{"GITHUB_ACTIONS": "true"}, opts: []Option{stderrTerminal(false)}, want: "ci"},
		{env: map[string]string{"GITLAB_CI": "true"}, opts: []Option{stderrTerminal(false)}, want: "ci"},
		{env: map[string]string{"GITHUB_ACTIONS": "true"}, opts: []Option{stderrTerminal(true)}, want: "live"},
		{env: map[string]string{"GITLAB_CI": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, opts: []Option{stderrTerminal(false)}, want: "otlp"},
		{env: map[string]string{"OTEL_LOGS_EXPORTER": "CI"}, want: "ci"},
	}
	for _, c := range cases {
		cfg := config{}
		for _, o := range append([]Option{env(c.env)}, c.opts...) {
			o(&cfg)
		}
		got, err := cfg.exporterNames()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, ",") != c.want {
			t.Errorf("env %v: exporters %v, want %s", c.env, got, c.want)
		}
	}
}

func TestSetupRejectsUnknownExporter(t *testing.T) {
	_, err := Setup(context.Background(), env(map[string]string{"OTEL_LOGS_EXPORTER": "pretty,fancy"}))
	if err == nil || !strings.Contains(err.Error(), `"fancy"`) || !strings.Contains(err.Error(), "pretty, json, otlp, console, none") {
		t.Fatalf("err = %v, want a clear error naming the value and the choices", err)
	}
	_, err = Setup(context.Background(), WithExporters("pretty", "fancy"), env(nil))
	if err == nil || !strings.Contains(err.Error(), `"fancy" in WithExporters`) {
		t.Fatalf("err = %v, want the option named as the source", err)
	}
	_, err = Setup(context.Background(), WithExporters("otlp"), env(map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "carrier-pigeon"}))
	if err == nil || !strings.Contains(err.Error(), "carrier-pigeon") {
		t.Fatalf("err = %v, want the bad protocol named", err)
	}
}

// TestSetupShutdownFlushes: everything recorded before shutdown is written,
// through the global provider and progress.Record, correlated to a span of
// the installed TracerProvider.
func TestSetupShutdownFlushes(t *testing.T) {
	var out testutil.SyncBuffer
	tel, err := Setup(context.Background(), WithExporters("json"), WithWriter(&out), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx, span := otel.Tracer("test").Start(context.Background(), "op")
	for i := range 500 {
		if err := progress.Record(ctx, progress.Progress(int64(i+1), 500, "steps")); err != nil {
			t.Fatal(err)
		}
	}
	span.End()
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := tel.Stats(); s.Exported != 500 || s.Dropped != 0 || s.Queued != 0 {
		t.Errorf("Stats after shutdown = %+v, want 500 exported", s)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 500 {
		t.Fatalf("%d lines after shutdown, want 500", len(lines))
	}
	if !strings.Contains(lines[0], span.SpanContext().TraceID().String()) {
		t.Errorf("first line not correlated with the span: %s", lines[0])
	}
	// After shutdown, Record is accepted and discarded without error.
	if err := progress.Record(ctx, progress.Progress(1, 1, "")); err != nil {
		t.Errorf("Record after shutdown: %v", err)
	}
}

// stuckExporter never finishes an export until its context ends.
type stuckExporter struct{}

func (stuckExporter) Export(ctx context.Context, _ []sdklog.Record) error {
	<-ctx.Done()
	return ctx.Err()
}
func (stuckExporter) Shutdown(context.Context) error   { return nil }
func (stuckExporter) ForceFlush(context.Context) error { return nil }

// TestSetupShutdownHonoursDeadline: with an exporter that never finishes,
// shutdown returns once its deadline passes and says what it lost.
func TestSetupShutdownHonoursDeadline(t *testing.T) {
	tel, err := Setup(context.Background(), WithExporters("none"), WithExporter(stuckExporter{}),
		WithoutTracerProvider(), WithoutGlobalPropagator(), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := progress.Record(context.Background(), progress.Progress(1, 1, "")); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- tel.Shutdown(ctx) }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second): // a hang detector, not a timing assertion
		t.Fatal("shutdown did not return after its deadline")
	}
	var lost *sdkparts.LostRecordsError
	if !errors.As(err, &lost) || lost.Unflushed != 3 {
		t.Fatalf("shutdown error = %v, want a LostRecordsError with 3 unflushed records", err)
	}
	if s := tel.Stats(); s.Shutdown != 3 || s.Queued != 0 {
		t.Errorf("Stats when shutdown returned = %+v, want the 3 records lost at shutdown", s)
	}
}
