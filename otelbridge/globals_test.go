package otelbridge_test

import (
	"testing"

	"go.opentelemetry.io/otel"

	"github.com/progressotel/progressotel/progress"
)

// restoreGlobals puts back, when the test ends, the globals that Setup
// replaces.
func restoreGlobals(t *testing.T) {
	t.Helper()
	lp, tp, prop, rec := otel.GetLoggerProvider(), otel.GetTracerProvider(), otel.GetTextMapPropagator(), progress.Default()
	mp := otel.GetMeterProvider()
	t.Cleanup(func() {
		// Only what changed: setting a global to its current value makes
		// the API complain.
		if !same(otel.GetLoggerProvider(), lp) {
			otel.SetLoggerProvider(lp)
		}
		if !same(otel.GetTracerProvider(), tp) {
			otel.SetTracerProvider(tp)
		}
		if !same(otel.GetTextMapPropagator(), prop) {
			otel.SetTextMapPropagator(prop)
		}
		if !same(otel.GetMeterProvider(), mp) {
			otel.SetMeterProvider(mp)
		}
		progress.SetDefault(rec)
	})
}

// same compares two globals; a propagator may be of an incomparable type.
func same(a, b any) (eq bool) {
	defer func() {
		if recover() != nil {
			eq = false
		}
	}()
	return a == b
}
