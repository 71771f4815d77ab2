// Package otelbridge is the event log service of a driver: it bootstraps the
// OpenTelemetry SDK so that progress events, condition transitions and the
// driver's own slog logs reach the configured exporters, correlated with
// traces and stamped with the request's tracectx values. Call Setup once in
// main and defer the Shutdown of the Telemetry it returns:
//
//	tel, err := otelbridge.Setup(ctx)
//	if err != nil {
//		return err
//	}
//	defer tel.Shutdown(context.Background())
//
// Setup reads the standard environment (OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_*, OTEL_LOGS_EXPORTER,
// OTEL_METRICS_EXPORTER, OTEL_BLRP_*), which wins over the code's
// defaults; most settings also have an Option, for tests.
//
// Setup assembles the parts of package sdkparts, which a driver that builds
// its own LoggerProvider uses directly: the tracectx processor stamps every
// record; each exporter sits behind a batch processor that never blocks
// the caller and counts every record it loses (reported in the stream as
// common/EventsDropped, in the progress.records.dropped metric and in
// Telemetry.Stats). Over OTLP a progress record is a standard log record
// (event name and attributes, no body): the collector builds the message
// TNCO receives from it.
//
// On a terminal, the default exporter is the live view
// (OTEL_LOGS_EXPORTER=live, prettyexporter.LiveExporter): one tree per
// operation, redrawn in place. The rule while it runs: write through
// Telemetry.Output, which prints each line above the live area; a write to
// os.Stderr lands under it, and the next frame overwrites it. What the
// standard log package (and slog's default handler, and the OpenTelemetry
// error handler's default, which write through it) and the SDK's internal
// logger print is routed through the view by Setup until Shutdown
// (docs/formats.md, "Other output").
//
// For the driver's own logs, use the contrib slog bridge through the
// provider Setup installs, otelslog.NewLogger(name), with the Context
// methods (InfoContext, ...) so that records are correlated and stamped.
package otelbridge
