// Package admissionextension is the admission extension of otelcol-progress:
// an HTTP server middleware that refuses a request before its body is read
// when the bodies already being read and decoded would exceed a budget.
//
// The OTLP receiver decodes a whole request before the memory_limiter
// processor can refuse it, so that processor alone cannot bound a
// collector's memory. With this middleware on the receiver, the bodies in
// flight weigh at most max_in_flight_bytes; a request over the budget gets
// 503 with Retry-After at once, which OTLP clients retry. A body whose
// decoded size is not known in advance (compressed, or without a
// Content-Length) weighs max_request_bytes, the receiver's own body limit.
//
// gRPC is not covered: its server decodes a message before any interceptor
// runs (bound it with max_recv_msg_size_mib and max_concurrent_streams).
// docs/collector.md ("Memory under large requests") has the figures.
//
// On a gRPC exporter to the next tier the same extension is a client
// middleware: that tier's refusal of the credentials is retried instead of
// dropping what this collector accepted (refusal.go).
package admissionextension

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensionmiddleware"
	"go.opentelemetry.io/otel/metric"
)

// Config is the extension's configuration.
type Config struct {
	// MaxInFlightBytes is the budget of request bodies being read and
	// decoded at once.
	MaxInFlightBytes int64 `mapstructure:"max_in_flight_bytes"`
	// MaxRequestBytes is the weight of a body whose decoded size is not
	// known in advance: the receiver's max_request_body_size.
	MaxRequestBytes int64 `mapstructure:"max_request_bytes"`
}

// Validate checks the budget.
func (c *Config) Validate() error {
	if c.MaxInFlightBytes <= 0 || c.MaxRequestBytes <= 0 {
		return errors.New("max_in_flight_bytes and max_request_bytes must be positive")
	}
	return nil
}

var typ = component.MustNewType("admission")

// NewFactory returns the factory of the admission extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(typ,
		func() component.Config {
			return &Config{MaxInFlightBytes: 32 << 20, MaxRequestBytes: 20 << 20}
		},
		func(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
			c := cfg.(*Config)
			a := &admission{budget: c.MaxInFlightBytes, unknown: c.MaxRequestBytes}
			var err error
			meter := set.MeterProvider.Meter("github.com/progressotel/progressotel/collector-config/admissionextension")
			if a.refused, err = meter.Int64Counter("otelcol_admission_refused_requests",
				metric.WithDescription("HTTP requests refused with 503 before their body was read: the bodies in flight would have exceeded max_in_flight_bytes."),
				metric.WithUnit("{request}")); err != nil {
				return nil, err
			}
			return a, nil
		},
		component.StabilityLevelDevelopment)
}

type admission struct {
	budget, unknown int64
	refused         metric.Int64Counter

	mu       sync.Mutex
	inFlight int64
}

var _ extensionmiddleware.HTTPServer = (*admission)(nil)

func (*admission) Start(context.Context, component.Host) error { return nil }
func (*admission) Shutdown(context.Context) error              { return nil }

// weight is what a request's body may cost once decoded, at most the budget
// (a request alone always fits, so that one larger than the budget is not
// refused for ever).
func (a *admission) weight(r *http.Request) int64 {
	w := r.ContentLength
	if w < 0 || (r.Header.Get("Content-Encoding") != "" && r.Header.Get("Content-Encoding") != "identity") {
		w = a.unknown
	}
	return min(w, a.budget)
}

func (a *admission) acquire(w int64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.inFlight+w > a.budget {
		return false
	}
	a.inFlight += w
	return true
}

func (a *admission) release(w int64) {
	a.mu.Lock()
	a.inFlight -= w
	a.mu.Unlock()
}

// GetHTTPHandler wraps the receiver's handler.
func (a *admission) GetHTTPHandler(context.Context) (extensionmiddleware.WrapHTTPHandlerFunc, error) {
	return func(_ context.Context, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			w := a.weight(r)
			if !a.acquire(w) {
				a.refused.Add(r.Context(), 1)
				rw.Header().Set("Retry-After", "1")
				http.Error(rw, "collector busy: too many request bytes in flight, retry later", http.StatusServiceUnavailable)
				return
			}
			defer a.release(w)
			next.ServeHTTP(rw, r)
		}), nil
	}, nil
}
