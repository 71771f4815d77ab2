package propagation

import (
	"cmp"
	"net/http"

	"go.opentelemetry.io/otel"
	otelprop "go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// HTTPMiddleware extracts the trace context, baggage and tracectx of every
// request with the global propagator (looked up per request, so that a
// later otelbridge.Setup takes effect) and serves the request with the
// resulting context:
//
//	http.ListenAndServe(addr, propagation.HTTPMiddleware(mux))
//
// It creates no span. When the request context already has a valid span
// (otelhttp's server span, in either order of composition), that span
// stays the active one and only baggage and tracectx are taken.
func HTTPMiddleware(next http.Handler) http.Handler {
	return NewHTTPMiddleware(nil)(next)
}

// NewHTTPMiddleware is HTTPMiddleware with propagator p; a nil p means the
// global propagator at request time.
func NewHTTPMiddleware(p otelprop.TextMapPropagator) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			prop := cmp.Or(p, otel.GetTextMapPropagator())
			ctx := r.Context()
			ext := prop.Extract(ctx, otelprop.HeaderCarrier(r.Header))
			if span := trace.SpanFromContext(ctx); span.SpanContext().IsValid() {
				// Extracting traceparent replaced the active span with the
				// remote parent; a span started before us is the better
				// parent for everything the handler records.
				ext = trace.ContextWithSpan(ext, span)
			}
			if ext != ctx {
				r = r.WithContext(ext)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// Transport is an http.RoundTripper that injects the trace context,
// baggage and tracectx of each request's context into a copy of the request
// before handing it to Base. It composes with otelhttp.NewTransport in
// either order.
type Transport struct {
	// Base sends the request; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Propagator injects; nil means the global propagator at request time.
	Propagator otelprop.TextMapPropagator
}

// NewTransport returns a Transport over base with the global propagator.
func NewTransport(base http.RoundTripper) *Transport { return &Transport{Base: base} }

// RoundTrip implements http.RoundTripper. The caller's request is not
// modified: headers are set on a clone.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	prop := cmp.Or(t.Propagator, otel.GetTextMapPropagator())
	base := cmp.Or(t.Base, http.DefaultTransport)
	out := r.Clone(r.Context())
	if out.Header == nil {
		out.Header = make(http.Header)
	}
	prop.Inject(r.Context(), otelprop.HeaderCarrier(out.Header))
	return base.RoundTrip(out)
}
