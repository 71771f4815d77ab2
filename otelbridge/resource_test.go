package otelbridge_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/progressotel/progressotel/otelbridge"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
)

// resourceOf runs Setup with opts, records one event and returns the
// resource attributes of the record the exporter saw.
func resourceOf(t *testing.T, opts ...otelbridge.Option) map[string]string {
	t.Helper()
	restoreGlobals(t)
	mem := &progresstest.Exporter{}
	tel, err := otelbridge.Setup(context.Background(), append([]otelbridge.Option{
		otelbridge.WithExporters(otelbridge.ExporterNone), otelbridge.WithExporter(mem),
		otelbridge.WithoutGlobalPropagator(),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := progress.Record(context.Background(), progress.Progress(1, 1, "")); err != nil {
		t.Fatal(err)
	}
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs := mem.Records()
	if len(recs) != 1 {
		t.Fatalf("%d records exported, want 1", len(recs))
	}
	out := map[string]string{}
	for _, kv := range recs[0].Resource().Attributes() {
		out[string(kv.Key)] = kv.Value.String()
	}
	return out
}

// TestServiceNameFromTheEnvironmentWinsOverCode: the precedence of every
// OpenTelemetry SDK, lowest first: what the SDK detects, the code's
// WithResource, OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME. An operator
// renames a deployed driver through its environment.
func TestServiceNameFromTheEnvironmentWinsOverCode(t *testing.T) {
	code := otelbridge.WithResource(resource.NewSchemaless(
		attribute.String("service.name", "ansible-driver"),
		attribute.String("service.version", "3.4.0"),
		attribute.String("deployment.environment.name", "dev")))
	cases := []struct {
		name, attrs, service string
		opts                 []otelbridge.Option
		want                 map[string]string
	}{
		{name: "code only", opts: []otelbridge.Option{code},
			want: map[string]string{"service.name": "ansible-driver", "service.version": "3.4.0", "deployment.environment.name": "dev"}},
		{name: "OTEL_RESOURCE_ATTRIBUTES over code", opts: []otelbridge.Option{code},
			attrs: "service.name=from-attrs,deployment.environment.name=prod",
			want:  map[string]string{"service.name": "from-attrs", "service.version": "3.4.0", "deployment.environment.name": "prod"}},
		{name: "OTEL_SERVICE_NAME over both", opts: []otelbridge.Option{code},
			attrs: "service.name=from-attrs,deployment.environment.name=prod", service: "renamed-driver",
			want: map[string]string{"service.name": "renamed-driver", "service.version": "3.4.0", "deployment.environment.name": "prod"}},
		{name: "OTEL_SERVICE_NAME over code", opts: []otelbridge.Option{code}, service: "renamed-driver",
			want: map[string]string{"service.name": "renamed-driver", "deployment.environment.name": "dev"}},
		{name: "nothing set",
			want: map[string]string{"service.name": "unknown_service:" + filepath.Base(os.Args[0]), "telemetry.sdk.language": "go"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("OTEL_RESOURCE_ATTRIBUTES", c.attrs)
			t.Setenv("OTEL_SERVICE_NAME", c.service)
			got := resourceOf(t, c.opts...)
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q (resource %v)", k, got[k], v, got)
				}
			}
			if got["telemetry.sdk.name"] != "opentelemetry" || got["process.pid"] == "" {
				t.Errorf("the SDK's own attributes are missing: %v", got)
			}
		})
	}
}

// TestResourceCarriesNoCommandLine: a command line can hold secrets
// (ansible-playbook -e password=…), and the resource travels with every
// batch, past the library's redaction, so process.command_args is never set.
func TestResourceCarriesNoCommandLine(t *testing.T) {
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
	t.Setenv("OTEL_SERVICE_NAME", "")
	got := resourceOf(t)
	if v, ok := got["process.command_args"]; ok {
		t.Errorf("process.command_args = %q is on the resource", v)
	}
	if got["process.executable.name"] == "" {
		t.Errorf("process.executable.name is missing: %v", got)
	}
}
