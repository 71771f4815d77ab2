package progress

import (
	"errors"
	"sync/atomic"

	"go.opentelemetry.io/otel"
)

// ErrNoLoggerProvider is reported once per process, through the
// OpenTelemetry error handler (otel.Handle, which writes to stderr unless
// the program set its own with otel.SetErrorHandler), when a Recorder of
// the global LoggerProvider drops a record because no provider was ever
// installed: neither otelbridge.Setup nor otel.SetLoggerProvider was
// called. Record still returns nil: telemetry never fails the driver.
var ErrNoLoggerProvider = errors.New("progress: no LoggerProvider is installed, records go nowhere: call otelbridge.Setup (or otel.SetLoggerProvider) before recording")

// unsetGlobal is the global LoggerProvider before any was installed: the
// API's delegate, which drops every record until one is set.
var unsetGlobal = otel.GetLoggerProvider()

var warnedNoProvider atomic.Bool

// warnNoProvider reports ErrNoLoggerProvider once when r emits through
// the global LoggerProvider and none was installed. Only called on the
// path of a record that is not enabled.
func (r *Recorder) warnNoProvider() {
	if r.global && !warnedNoProvider.Load() && otel.GetLoggerProvider() == unsetGlobal && warnedNoProvider.CompareAndSwap(false, true) {
		otel.Handle(ErrNoLoggerProvider)
	}
}
