// Package otelbridge is the event log service of a driver: it bootstraps the
// OpenTelemetry SDK at start-up so that progress events, condition
// transitions and the driver's own slog logs reach the configured exporters,
// correlated with traces and stamped with the request's tracectx values.
//
// Call Setup once in main and defer its shutdown:
//
//	shutdown, err := otelbridge.Setup(ctx)
//	if err != nil {
//		return err
//	}
//	defer shutdown(context.Background())
//
// Setup reads the standard environment (OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_*, OTEL_LOGS_EXPORTER); every
// setting also has an Option, so tests configure it without the
// environment.
//
// What Setup installs, in record order:
//   - NewTraceCtxProcessor stamps the request's tracectx values on every
//     record (progress events, transitions, slog logs through Slog);
//   - each exporter sits behind a BatchProcessor that never blocks the
//     caller and counts every record it loses, reporting the losses in the
//     stream as common/EventsDropped, in the progress.records.dropped
//     metric and in Stats;
//   - the otlp exporter is wrapped in SeedBodyExporter, so the collector
//     can forward each event to TNCO with nested details.
package otelbridge
