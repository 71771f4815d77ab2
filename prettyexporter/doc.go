// Package prettyexporter holds two OpenTelemetry log exporters for
// progress events and ordinary logs: a readable one-line-per-record format
// for developers (Exporter, from New) and JSON lines for machines
// (JSONExporter, from NewJSON). Both implement
// go.opentelemetry.io/otel/sdk/log.Exporter; otelbridge.Setup picks them
// from OTEL_LOGS_EXPORTER=pretty and =json.
//
// The pretty format puts the progressEventType first, its group in a
// colour of its own, then the resource, a short trace id, the tracectx
// transaction id and the details as key=value:
//
//	14:03:07.412 INF ansible/TaskStarted  Play/site.yml  4bf92f35  tx=tx-1  taskName="Install nginx" argsHidden=false
//	14:03:09.020 INF provisioning  Cluster/foo  False (Provisioning) → True (Provisioned) "Cluster is ready"
//
// The JSON format is the seed schema (eventType, progressEventType, nested
// details) plus @timestamp, level, traceId, spanId and every tracectx.*
// attribute as a top-level field; docs/formats.md has the exact shape.
//
// Recipes:
//   - No colour: WithColor(ColorNever), or set NO_COLOR=1 in the
//     environment (which wins over every option).
//   - Colour even through a pipe (e.g. into less -R): WithColor(ColorAlways).
//   - No time, for examples and golden tests: WithoutTime().
//   - Another destination: WithWriter(w). Each Export writes its batch with
//     one Write; wrap w in a bufio.Writer and ForceFlush/Shutdown flush it.
//
// Nothing from a record reaches the output raw: control characters, DEL,
// ANSI escape sequences, C1 controls and invalid UTF-8 in keys, values,
// bodies and event names are escaped (\x1b, \n, \u202e), so a log line
// cannot drive the terminal.
package prettyexporter
