// Package sdkparts holds the OpenTelemetry log SDK parts that
// otelbridge.Setup assembles, for a driver that builds its own
// sdklog.LoggerProvider and still wants what Setup gives:
//   - NewTraceCtxProcessor stamps the request's tracectx values on every
//     record, redacted;
//   - NewBatchProcessor is the SDK's batch processor with drop accounting:
//     every record it loses is counted (Stats, the progress.records.dropped
//     metric), reported in the stream as common/EventsDropped and, at
//     Shutdown, returned as a *LostRecordsError.
//
// The tracectx processor decorates records, so it goes before the
// processors that export them:
//
//	lp := sdklog.NewLoggerProvider(
//		sdklog.WithResource(res),
//		sdklog.WithProcessor(sdkparts.NewTraceCtxProcessor(progress.DefaultRedactor())),
//		sdklog.WithProcessor(sdkparts.NewBatchProcessor(otlpExporter, sdkparts.WithExporterName("otlp"))),
//	)
//
// It depends on the SDK but on no exporter, so exporters can use it.
package sdkparts
