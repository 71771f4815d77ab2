// Package propagation carries Ignition's tracectx values (x-tracectx-*
// headers: transactionid, processid, taskid, tenantid, ...) with the W3C
// trace context and baggage through a driver, so that every record the
// driver emits for a request can be found by the request's ids:
//   - [Values], held by a context ([FromContext], [ContextWithValues],
//     [WithValue] for driver-set ids such as driverrequestid);
//   - [TraceCtx], the TextMapPropagator for the x-tracectx-* headers, and
//     [Default], the composite of W3C trace context, W3C baggage and
//     tracectx that otelbridge.Setup installs;
//   - carriers: [HTTPMiddleware] and [Transport] for HTTP, [KafkaHeaders]
//     for Kafka record headers of any client, [EnvCarrier] for a child
//     process's environment, and [ParseLoggingContext] /
//     [Values.LoggingContext] for Ignition's logging_context object.
//
// sdkparts.NewTraceCtxProcessor stamps the values on every record.
//
// Values come from outside the process, so keys and values are checked
// ([NormalizeKey], [NormalizeValue]) and a context holds at most
// [MaxValues] values. Propagators cannot fail: they skip what breaks the
// rules; [ExtractValues] and [ParseLoggingContext] also return an error
// describing what was skipped.
package propagation
