// Package progress is what a driver calls to report live progress of a
// resource lifecycle transition (Create, Install, Upgrade, Delete, ...) and
// condition transitions of the resources it manages.
//
// A progress event is the ResourceTransitionProgressEvent of Ignition: a
// progressEventType of the form "<group>/<name>" and schema-less details.
// [Record] turns it into an OpenTelemetry log record whose EventName is the
// progressEventType, whose attributes hold the flattened details, and which
// the SDK correlates to the active span of ctx. The record goes through the
// global LoggerProvider (see [go.opentelemetry.io/otel.SetLoggerProvider]) or
// the one given to a [Recorder]. Condition transitions go through
// [RecordTransition], a [Tracker] or [Recorder.RecordIfChanged].
//
// Programs that read the records (exporters, tests, consumers) use package
// progress/wire: the attribute names, Decode, the nested message body and
// the encoding of every Go value. Driver tests use progress/progresstest.
//
// # Naming convention
//
// The group is the driver's name ("ansible", "kubernetes", "terraform") or
// "common" for steps every driver has; the name is an UpperCamelCase verb
// phrase ("TaskStarted", "ObjectCreated"). See [ValidationError] for the
// exact rule.
//
// # Guarantees
//
// Record never blocks on I/O and never panics, whatever the details hold
// (typed nils, methods that panic, cycles): the SDK's processors own
// delivery. An invalid event returns a [ValidationError] wrapping
// [ErrInvalidEvent] and is counted in [Stats] and in the
// progress.events.invalid metric. Details are redacted before they leave
// the call (see [Redactor]) and each record is bounded by [Limits]: its
// encoded size, and the work one call may spend, whatever the input.
//
// The package depends only on OpenTelemetry API modules, never on the SDK.
package progress
