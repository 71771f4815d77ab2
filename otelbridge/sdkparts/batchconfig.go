package sdkparts

import (
	"cmp"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
)

// Defaults of the batch processor; the OTEL_BLRP_* variables and the
// BatchOptions override them, as for the SDK's BatchProcessor.
const (
	DefaultMaxQueueSize       = 2048
	DefaultExportInterval     = time.Second
	DefaultExportTimeout      = 30 * time.Second
	DefaultExportMaxBatchSize = 512
)

// BatchOption configures NewBatchProcessor.
type BatchOption func(*batchConfig)

type batchConfig struct {
	maxQueue  int
	interval  time.Duration
	timeout   time.Duration
	batchSize int
	name      string
	meter     metric.MeterProvider
}

// WithMaxQueueSize bounds the queue (default 2048, OTEL_BLRP_MAX_QUEUE_SIZE).
func WithMaxQueueSize(n int) BatchOption { return func(c *batchConfig) { c.maxQueue = n } }

// WithExportInterval sets the longest wait between exports (default 1s,
// OTEL_BLRP_SCHEDULE_DELAY in milliseconds).
func WithExportInterval(d time.Duration) BatchOption {
	return func(c *batchConfig) { c.interval = d }
}

// WithExportTimeout bounds each export of a batch (default 30s,
// OTEL_BLRP_EXPORT_TIMEOUT in milliseconds).
func WithExportTimeout(d time.Duration) BatchOption { return func(c *batchConfig) { c.timeout = d } }

// WithExportMaxBatchSize caps the records of one export (default 512,
// OTEL_BLRP_MAX_EXPORT_BATCH_SIZE; never more than the queue size).
func WithExportMaxBatchSize(n int) BatchOption { return func(c *batchConfig) { c.batchSize = n } }

// WithExporterName names the exporter in the progress.records.dropped
// metric ("otlp", "json", ...).
func WithExporterName(name string) BatchOption { return func(c *batchConfig) { c.name = name } }

// WithDropMeterProvider counts drops through p instead of the global
// MeterProvider.
func WithDropMeterProvider(p metric.MeterProvider) BatchOption {
	return func(c *batchConfig) { c.meter = p }
}

func newBatchConfig(opts []BatchOption) batchConfig {
	c := batchConfig{
		maxQueue:  envInt("OTEL_BLRP_MAX_QUEUE_SIZE", DefaultMaxQueueSize),
		interval:  envMillis("OTEL_BLRP_SCHEDULE_DELAY", DefaultExportInterval),
		timeout:   envMillis("OTEL_BLRP_EXPORT_TIMEOUT", DefaultExportTimeout),
		batchSize: envInt("OTEL_BLRP_MAX_EXPORT_BATCH_SIZE", DefaultExportMaxBatchSize),
	}
	for _, o := range opts {
		o(&c)
	}
	c.maxQueue = positive(c.maxQueue, DefaultMaxQueueSize)
	c.interval = positive(c.interval, DefaultExportInterval)
	c.timeout = positive(c.timeout, DefaultExportTimeout)
	c.batchSize = positive(c.batchSize, DefaultExportMaxBatchSize)
	c.batchSize = min(c.batchSize, c.maxQueue)
	c.meter = cmp.Or(c.meter, otel.GetMeterProvider())
	return c
}

func positive[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

func envInt(key string, def int) int {
	if v, err := strconv.Atoi(strings.TrimSpace(os.Getenv(key))); err == nil {
		return positive(v, def)
	}
	return def
}

func envMillis(key string, def time.Duration) time.Duration {
	return time.Duration(envInt(key, int(def/time.Millisecond))) * time.Millisecond
}
