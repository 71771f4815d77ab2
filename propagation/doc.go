// Package propagation carries Ignition's tracectx values (x-tracectx-*
// headers: transactionid, processid, taskid, tenantid, ...) with the W3C
// trace context and baggage through a driver, so that every record the
// driver emits for a request can be found by the request's ids.
//
// The pieces:
//
//   - [Values], held by a context ([FromContext], [ContextWithValues],
//     [WithValue] for driver-set ids such as driverrequestid).
//   - [TraceCtx], an OpenTelemetry TextMapPropagator for the x-tracectx-*
//     headers, and [Default], the composite of W3C trace context, W3C
//     baggage and tracectx that otelbridge.Setup installs globally.
//   - Carriers: [HTTPMiddleware] and [Transport] for HTTP, [KafkaHeaders]
//     for Kafka record headers of any client, and [ParseLoggingContext] /
//     [Values.LoggingContext] for the logging_context object of Ignition's
//     request-queue messages.
//
// The stamping of the values on records is done by
// sdkparts.NewTraceCtxProcessor (package otelbridge/sdkparts), so that
// ordinary logs get them too.
//
// # Bad input
//
// Values come from outside the process, so keys and values are checked
// ([NormalizeKey], [NormalizeValue]) and a context holds at most
// [MaxValues] values. Propagators cannot fail: they skip what breaks the
// rules. [ExtractValues] and [ParseLoggingContext] return the same result
// with an error describing what was skipped.
package propagation
