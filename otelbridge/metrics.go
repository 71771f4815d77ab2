package otelbridge

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
)

// WithMetricReader adds a reader of the MeterProvider Setup installs, in
// addition to what OTEL_METRICS_EXPORTER chooses: a ManualReader in
// tests, a Prometheus exporter in a driver that serves one.
func WithMetricReader(r sdkmetric.Reader) Option {
	return func(c *config) { c.metricReaders = append(c.metricReaders, r) }
}

// WithoutMeterProvider leaves the global MeterProvider alone. By default
// Setup installs an SDK MeterProvider when it has a reader: the OTLP
// exporter (OTEL_METRICS_EXPORTER=otlp, or unset with an OTLP endpoint)
// or WithMetricReader's.
func WithoutMeterProvider() Option {
	return func(c *config) { c.noMeter = true }
}

// metricExporterNames resolves OTEL_METRICS_EXPORTER: otlp or none (a
// comma-separated list, as for the other signals); unset, otlp when an
// OTLP endpoint for metrics is set, else none.
func (c *config) metricExporterNames() ([]string, error) {
	env := strings.TrimSpace(c.getenv("OTEL_METRICS_EXPORTER"))
	if env == "" {
		if c.getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || c.getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != "" {
			return []string{ExporterOTLP}, nil
		}
		return nil, nil
	}
	var names []string
	for n := range strings.SplitSeq(env, ",") {
		switch n = strings.ToLower(strings.TrimSpace(n)); n {
		case "", ExporterNone:
		case ExporterOTLP:
			names = append(names, n)
		default:
			return nil, fmt.Errorf("otelbridge: unknown metric exporter %q in OTEL_METRICS_EXPORTER (want otlp or none)", n)
		}
	}
	return names, nil
}

// meterProvider builds t.mp when there is a reader. The OTLP exporter
// sits behind a PeriodicReader (OTEL_METRIC_EXPORT_INTERVAL, 60 s by
// default); Shutdown exports what is left, so a short run's metrics
// arrive too.
func (c *config) meterProvider(ctx context.Context, t *Telemetry, res *resource.Resource) error {
	if c.noMeter {
		return nil
	}
	names, err := c.metricExporterNames()
	if err != nil {
		return err
	}
	opts := []sdkmetric.Option{sdkmetric.WithResource(res)}
	for _, r := range c.metricReaders {
		opts = append(opts, sdkmetric.WithReader(r))
	}
	if len(names) > 0 {
		exp, err := c.otlpMetricExporter(ctx)
		if err != nil {
			return err
		}
		opts = append(opts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	}
	if len(opts) == 1 {
		return nil
	}
	t.mp = sdkmetric.NewMeterProvider(opts...)
	return nil
}

func (c *config) otlpMetricExporter(ctx context.Context) (sdkmetric.Exporter, error) {
	exp, check, err := newOTLP(c, "METRICS", "metric",
		func() (sdkmetric.Exporter, error) {
			return otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithDialOption(reconnect))
		},
		func() (sdkmetric.Exporter, error) { return otlpmetrichttp.New(ctx) })
	if err != nil {
		return nil, err
	}
	return &checkedMetricExporter{Exporter: exp, check: check}, nil
}

type checkedMetricExporter struct {
	sdkmetric.Exporter
	check *protocolCheck
}

// Export sends rm unless it holds no metric: a driver that ran no adapter
// (a controller that only records events) sends no metrics request, so an
// endpoint without a metrics service sees nothing of them.
func (e *checkedMetricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	n := 0
	for _, sm := range rm.ScopeMetrics {
		n += len(sm.Metrics)
	}
	if n == 0 {
		return nil
	}
	err := e.Exporter.Export(ctx, rm)
	e.check.observe(err)
	return err
}

// MeterProvider returns the provider Setup installed globally, or nil
// when it installed none (no reader, or WithoutMeterProvider).
func (t *Telemetry) MeterProvider() *sdkmetric.MeterProvider {
	if t == nil {
		return nil
	}
	return t.mp
}
