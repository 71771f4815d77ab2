// Package otelbridge is the event log service of a driver: it bootstraps the
// OpenTelemetry SDK at start-up so that progress events, condition
// transitions and the driver's own slog logs reach the configured exporters,
// correlated with traces and stamped with the request's tracectx values.
//
// Call Setup once in main and defer the Shutdown of the Telemetry it
// returns:
//
//	tel, err := otelbridge.Setup(ctx)
//	if err != nil {
//		return err
//	}
//	defer tel.Shutdown(context.Background())
//
// Setup reads the standard environment (OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_*, OTEL_LOGS_EXPORTER,
// OTEL_METRICS_EXPORTER, OTEL_BLRP_*); the environment wins over the code's defaults, and most
// settings also have an Option, so tests configure them without the
// environment.
//
// Setup assembles the parts of package sdkparts, which a driver that
// builds its own LoggerProvider uses directly. In record order:
//   - the tracectx processor stamps the request's tracectx values on every
//     record (progress events, transitions, slog logs);
//   - each exporter sits behind a batch processor that never blocks the
//     caller and counts every record it loses, reporting the losses in the
//     stream as common/EventsDropped, in the progress.records.dropped
//     metric and in Telemetry.Stats;
//   - the otlp exporter is wrapped in the message body exporter, so that
//     the collector can forward each event to TNCO with nested details.
//
// On a terminal, the default exporter is the live view
// (OTEL_LOGS_EXPORTER=live, prettyexporter.LiveExporter): one tree per
// operation, redrawn in place; elsewhere it writes plain lines. Whatever
// the driver prints itself (a wrapped tool's output, notices) belongs in
// Telemetry.Output, which prints it above the live area instead of
// through it.
//
// For the driver's own logs, use the contrib slog bridge, which goes
// through the provider Setup installs: otelslog.NewLogger(name), with the
// Context methods (InfoContext, ...) so that records are correlated and
// stamped.
package otelbridge
