package otelbridge

import (
	"log/slog"

	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel"
)

// slogDefaultName is the instrumentation scope of a logger created with an
// empty name.
const slogDefaultName = "github.com/progressotel/progressotel/otelbridge/slog"

// Slog returns a *slog.Logger whose records go to the OpenTelemetry
// LoggerProvider: the global one (otel.GetLoggerProvider) unless an
// otelslog.WithLoggerProvider option is given. name is the instrumentation
// scope, usually the driver's import path; "" gives a fixed default.
//
// The logger is the contrib otelslog bridge, unchanged. Use the Context
// methods (InfoContext, ...) so that each record is correlated with the
// span of ctx and, through NewTraceCtxProcessor, stamped with the request's
// tracectx values:
//
//	log := otelbridge.Slog("example.com/mydriver")
//	log.InfoContext(ctx, "playbook started", "playbook", name)
//
// The global provider is looked up when the logger is created, and the
// global provider forwards to the one set later by Setup, so a logger made
// before Setup also works. To make every slog call of the process go
// through the bridge: slog.SetDefault(otelbridge.Slog(name)).
func Slog(name string, opts ...otelslog.Option) *slog.Logger {
	return slog.New(SlogHandler(name, opts...))
}

// SlogHandler returns the slog.Handler of Slog, to combine with other
// handlers (for example a fan-out that also writes to a local file).
func SlogHandler(name string, opts ...otelslog.Option) slog.Handler {
	if name == "" {
		name = slogDefaultName
	}
	// The provider goes first so that a caller's WithLoggerProvider, applied
	// later, wins.
	all := make([]otelslog.Option, 0, len(opts)+1)
	all = append(all, otelslog.WithLoggerProvider(otel.GetLoggerProvider()))
	all = append(all, opts...)
	return otelslog.NewHandler(name, all...)
}
