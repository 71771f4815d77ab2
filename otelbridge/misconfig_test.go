package otelbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
)

// TestSetupRejectsEndpointWithoutScheme: an OTLP endpoint variable without
// http:// or https:// is refused by Setup with an error naming the
// variable and the value to write, instead of the SDK sending elsewhere.
func TestSetupRejectsEndpointWithoutScheme(t *testing.T) {
	for _, name := range endpointVars {
		for _, v := range []string{"127.0.0.1:4318", "localhost:4318", "grpc://127.0.0.1:4317", "http://"} {
			tel, err := Setup(context.Background(), WithWriter(&bytes.Buffer{}), env(map[string]string{name: v}))
			if err == nil {
				_ = tel.Shutdown(context.Background())
				t.Errorf("%s=%s: Setup accepted it", name, v)
				continue
			}
			if !strings.Contains(err.Error(), name+"=") || !strings.Contains(err.Error(), "http://") {
				t.Errorf("%s=%s: %v, want the variable and the fix named", name, v, err)
			}
		}
	}
	_, err := Setup(context.Background(), env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "127.0.0.1:4318"}))
	if want := `set it to http://127.0.0.1:4318`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
	tel, err := Setup(context.Background(), WithoutTracerProvider(), WithoutMeterProvider(), WithExporters("none"),
		env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "https://collector.example:4318/v1/logs"}))
	if err != nil {
		t.Fatalf("valid endpoints refused: %v", err)
	}
	_ = tel.Shutdown(context.Background())
}

// TestSetupHonoursSDKDisabled: OTEL_SDK_DISABLED=true builds no exporter,
// whatever else the environment says (even an endpoint Setup would
// refuse), and records are accepted and dropped quietly.
func TestSetupHonoursSDKDisabled(t *testing.T) {
	var buf bytes.Buffer
	tel, err := Setup(context.Background(), WithWriter(&buf), env(map[string]string{
		"OTEL_SDK_DISABLED": "TRUE", "OTEL_LOGS_EXPORTER": "json", "OTEL_EXPORTER_OTLP_ENDPOINT": "127.0.0.1:4318",
	}))
	if err != nil {
		t.Fatal(err)
	}
	// Spans keep real ids (a child process inherits the context), and go
	// nowhere.
	if tel.TracerProvider() == nil {
		t.Fatal("no TracerProvider: a caller of Telemetry.TracerProvider gets nil")
	}
	ctx, span := otel.Tracer("test").Start(context.Background(), "Install")
	if !span.SpanContext().IsValid() {
		t.Error("the span has no ids")
	}
	if err := progress.Record(ctx, progress.OperationStarted("Install")); err != nil {
		t.Fatal(err)
	}
	span.End()
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 0 {
		t.Errorf("OTEL_SDK_DISABLED=true, and yet: %s", buf.String())
	}
	if s := tel.Stats(); s != (sdkparts.DropStats{}) {
		t.Errorf("Stats = %+v, want zero", s)
	}
}

// TestStatsCountsEveryExporter: the live view and pretty, which are not
// batched, count what they took in Stats, as json does.
func TestStatsCountsEveryExporter(t *testing.T) {
	for _, exporters := range []string{"live", "pretty", "json", "pretty,json"} {
		tel, err := Setup(context.Background(), WithWriter(&testutil.SyncBuffer{}), WithoutTracerProvider(), WithoutMeterProvider(),
			env(map[string]string{"OTEL_LOGS_EXPORTER": exporters}))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 16 {
			if err := progress.Record(context.Background(), progress.Progress(int64(i), 16, "steps")); err != nil {
				t.Fatal(err)
			}
		}
		if err := tel.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := int64(16 * (strings.Count(exporters, ",") + 1))
		if s := tel.Stats(); s.Exported != want || s.Dropped != 0 {
			t.Errorf("%s: Stats = %+v, want %d exported", exporters, s, want)
		}
	}
}

// TestJSONOutputStaysParseable: with json, the program's text written to
// Output becomes JSON lines of its own, so the stream stays one JSON
// object per line.
func TestJSONOutputStaysParseable(t *testing.T) {
	var buf bytes.Buffer
	tel, err := Setup(context.Background(), WithWriter(&buf), WithoutTracerProvider(), WithoutMeterProvider(),
		env(map[string]string{"OTEL_LOGS_EXPORTER": "json"}))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(tel.Output(), "ansible-driver: running the playbook")
	if err := progress.Record(context.Background(), progress.OperationStarted("Install")); err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(tel.Output(), "two\nlines, the last one ")
	fmt.Fprint(tel.Output(), "unfinished")
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	var messages []string
	for line := range strings.Lines(buf.String()) {
		var m struct {
			Message string `json:"message"`
			Level   string `json:"level"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON line: %q (%v)\n%s", line, err, buf.String())
		}
		messages = append(messages, m.Message)
	}
	for _, want := range []string{"ansible-driver: running the playbook", "common/OperationStarted", "two", "lines, the last one unfinished"} {
		if !strings.Contains(strings.Join(messages, "\n")+"\n", want+"\n") {
			t.Errorf("no JSON line with message %q in %q", want, messages)
		}
	}
}

// failingExporter refuses every export, so its batch processor drops.
type failingExporter struct{}

func (failingExporter) Export(context.Context, []sdklog.Record) error {
	return errors.New("refused")
}
func (failingExporter) Shutdown(context.Context) error   { return nil }
func (failingExporter) ForceFlush(context.Context) error { return nil }

// TestDropMetricGoesToSetupsMeterProvider: with a MeterProvider installed
// before Setup, the drop counter goes to the one Setup installs.
func TestDropMetricGoesToSetupsMeterProvider(t *testing.T) {
	before := otel.GetMeterProvider()
	t.Cleanup(func() { otel.SetMeterProvider(before) })
	oldReader, newReader := sdkmetric.NewManualReader(), sdkmetric.NewManualReader()
	otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(oldReader)))

	tel, err := Setup(context.Background(), WithExporters("none"), WithExporter(failingExporter{}),
		WithMetricReader(newReader), WithoutTracerProvider(), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tel.Shutdown(context.Background()) }()
	if err := progress.Record(context.Background(), progress.OperationStarted("Install")); err != nil {
		t.Fatal(err)
	}
	_ = tel.ForceFlush(context.Background())
	if tel.Stats().ExportFailed == 0 {
		t.Fatalf("no drop to count: %+v", tel.Stats())
	}
	has := func(r sdkmetric.Reader) bool {
		var rm metricdata.ResourceMetrics
		if err := r.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name == sdkparts.MetricRecordsDropped {
					return true
				}
			}
		}
		return false
	}
	if !has(newReader) {
		t.Errorf("%s is not on the MeterProvider Setup installed", sdkparts.MetricRecordsDropped)
	}
	if has(oldReader) {
		t.Errorf("%s went to the MeterProvider installed before Setup", sdkparts.MetricRecordsDropped)
	}
}
