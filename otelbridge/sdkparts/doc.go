// Package sdkparts holds the OpenTelemetry log SDK parts that
// otelbridge.Setup assembles, for a driver that builds its own
// sdklog.LoggerProvider (its own exporters, resource or processor order)
// and still wants what Setup gives:
//
//   - NewTraceCtxProcessor stamps the request's tracectx values
//     (x-tracectx-* headers) on every record, progress events, condition
//     transitions and slog logs alike, redacted;
//   - NewBatchProcessor is the SDK's batch processor with drop accounting:
//     it never blocks the caller, and every record it loses is counted
//     (Stats, the progress.records.dropped metric), reported in the stream
//     as common/EventsDropped, and, at Shutdown, returned as a
//     *LostRecordsError;
//   - NewMessageBodyExporter gives each progress record, as its body, the
//     message the collector config forwards to TNCO, built once; wrap an
//     OTLP exporter with it.
//
// The order matters: the tracectx processor decorates records, so it goes
// before the processors that export them.
//
//	lp := sdklog.NewLoggerProvider(
//		sdklog.WithResource(res),
//		sdklog.WithProcessor(sdkparts.NewTraceCtxProcessor(progress.DefaultRedactor())),
//		sdklog.WithProcessor(sdkparts.NewBatchProcessor(
//			sdkparts.NewMessageBodyExporter(otlpExporter), sdkparts.WithExporterName("otlp"))),
//	)
//
// The package depends on the SDK but not on any exporter, so that
// exporters (prettyexporter) and their tests can use it.
package sdkparts
