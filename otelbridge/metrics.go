package otelbridge

import (
	"context"
	"fmt"
	"slices"
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

// metricOTLP resolves OTEL_METRICS_EXPORTER, otlp or none (a
// comma-separated list, as for the other signals), into whether metrics go
// over OTLP; unset, they do when an OTLP endpoint for metrics is set.
func (c *config) metricOTLP() (bool, error) {
	env := strings.TrimSpace(c.getenv("OTEL_METRICS_EXPORTER"))
	if env == "" {
		return c.getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || c.getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != "", nil
	}
	otlp := false
	for n := range strings.SplitSeq(env, ",") {
		switch n = strings.ToLower(strings.TrimSpace(n)); n {
		case "", ExporterNone:
		case ExporterOTLP:
			otlp = true
		default:
			return false, fmt.Errorf("otelbridge: unknown metric exporter %q in OTEL_METRICS_EXPORTER (want otlp or none)", n)
		}
	}
	return otlp, nil
}

// meterProvider builds t.mp when there is a reader. The OTLP exporter
// sits behind a PeriodicReader (OTEL_METRIC_EXPORT_INTERVAL, 60 s by
// default); Shutdown exports what is left, so a short run's metrics
// arrive too.
func (c *config) meterProvider(ctx context.Context, t *Telemetry, res *resource.Resource) error {
	if c.noMeter {
		return nil
	}
	otlp, err := c.metricOTLP()
	if err != nil {
		return err
	}
	opts := []sdkmetric.Option{sdkmetric.WithResource(res)}
	for _, r := range c.metricReaders {
		opts = append(opts, sdkmetric.WithReader(r))
	}
	if otlp {
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
	if !slices.ContainsFunc(rm.ScopeMetrics, func(sm metricdata.ScopeMetrics) bool { return len(sm.Metrics) > 0 }) {
		return nil
	}
	return e.check.observe(e.Exporter.Export(ctx, rm))
}

// MeterProvider returns the provider Setup installed globally, or nil
// when it installed none (no reader, or WithoutMeterProvider).
func (t *Telemetry) MeterProvider() *sdkmetric.MeterProvider {
	if t == nil {
		return nil
	}
	return t.mp
}
