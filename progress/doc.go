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
// the one given to a [Recorder].
//
// # Naming convention
//
// The group is the driver's name ("ansible", "kubernetes", "terraform") or
// "common" for steps every driver has; the name is an UpperCamelCase verb
// phrase ("TaskStarted", "ObjectCreated"). See [ParseType] for the exact rule.
//
// # Guarantees
//
// Record never blocks on I/O and never panics: the SDK's processors own
// delivery. An invalid event returns an error wrapping [ErrInvalidEvent] and
// is counted in [Stats] and in the progress.events.invalid metric.
// Details are redacted before they leave the call (see [Redactor]) and are
// bounded by [Limits].
//
// The package depends only on OpenTelemetry API modules, never on the SDK.
package progress
