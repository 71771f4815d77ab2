package progress

import (
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/metric"
)

// Option configures a Recorder.
type Option func(*config)

type config struct {
	provider log.LoggerProvider
	meter    metric.MeterProvider
	red      *Redactor
	lim      Limits
	noSeq    bool
}

// WithLoggerProvider emits through p instead of the global LoggerProvider.
func WithLoggerProvider(p log.LoggerProvider) Option {
	return func(c *config) { c.provider = p }
}

// WithMeterProvider counts invalid and truncated events through p instead
// of the global MeterProvider.
func WithMeterProvider(p metric.MeterProvider) Option {
	return func(c *config) { c.meter = p }
}

// WithRedactor replaces the default Redactor. Use WithoutRedaction to turn
// redaction off; a nil Redactor here keeps the default.
func WithRedactor(r *Redactor) Option {
	return func(c *config) {
		if r != nil {
			c.red = r
		}
	}
}

// WithSecretKeys extends the redacted key fragments.
func WithSecretKeys(keys ...string) Option {
	return func(c *config) { c.red = c.red.With(keys...) }
}

// WithoutRedaction turns redaction off. Secrets in details then leave the
// process: only for pipelines that redact downstream.
func WithoutRedaction() Option {
	return func(c *config) { c.red = &Redactor{} }
}

// WithLimits sets the limits on details; zero fields keep their defaults.
func WithLimits(l Limits) Option {
	return func(c *config) { c.lim = l }
}

// WithoutSequence omits the progress.sequence attribute.
func WithoutSequence() Option {
	return func(c *config) { c.noSeq = true }
}
