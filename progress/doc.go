// Package progress is what a driver calls to report live progress of a
// resource lifecycle transition (Create, Install, Upgrade, Delete, ...) and
// condition transitions of the resources it manages.
//
// A progress event is the ResourceTransitionProgressEvent of Ignition: a
// progressEventType of the form "<group>/<name>" and schema-less details.
// [Record] turns it into an OpenTelemetry log record whose EventName is the
// progressEventType, whose attributes hold the flattened details, and which
// the SDK correlates to the active span of ctx, through the global
// LoggerProvider or the one given to a [Recorder]. Condition transitions go
// through [RecordTransition], a [Tracker] or [Recorder.RecordIfChanged].
// Readers of the records use package progress/wire; driver tests use
// progress/progresstest.
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
// Record never blocks on I/O and never panics, whatever the details hold:
// the SDK's processors own delivery. An invalid event returns a
// [ValidationError] and is counted ([Stats], progress.events.invalid).
// Details are redacted before they leave the call (see [Redactor]) and each
// record is bounded by [Limits]: its encoded size, and the work one call
// may spend. The package depends only on OpenTelemetry API modules.
package progress
