// Package prettyexporter holds three OpenTelemetry log exporters for progress events and
// ordinary logs: the live view a developer watches a run in (LiveExporter, from NewLive), a
// readable one-line-per-record format (Exporter, from New) and JSON lines for machines
// (JSONExporter, from NewJSON). All implement go.opentelemetry.io/otel/sdk/log.Exporter;
// otelbridge.Setup picks them from OTEL_LOGS_EXPORTER=live, =pretty and =json, and the live view
// by default when stderr is a terminal.
//
// The live view draws one tree per operation on a terminal, redrawn in place at most 10 times a
// second: the header (operation, resource, trace id, transaction id, status, elapsed time), the
// spans of the operation's trace as a tree (whoever made them: Ansible's plays, tasks and hosts,
// OpenTofu's resources, a Go driver's own steps, a nested progressotel run), condition streams,
// an N-of-M bar from common/Progress:
//
//	▸ Install  resource::nginx::1.0/nginx-web-tier  trace 7a856149  tx=7d9b1c52-tx    running 5s
//	  ▸ play Install nginx on web tier  1 ignored · 3 changed · 1 ok                        5s
//	    ✓ task Install nginx  2 changed                                                   1.3s
//	    ✗ task Probe optional module  1 ignored · 1 changed                               1.0s
//	      ✗ host web-1  failed, ignored  non-zero return code                             0.7s
//	    ▸ task Start nginx                                                                  0s
//
// A row ends as its span's progress.outcome attribute or status says; records add the
// operation's end, the bar and the text of warnings and failures. Finished parts that went as
// planned (ok, skipped, changed) collapse to one line printed above the live area; failed ones,
// and ones with a message, stay until the operation ends and its final state is printed above,
// with a summary of what failed, where and why. Where the output is not a terminal it writes
// the pretty format's lines instead, with the resource, trace id and transaction id in a header
// line per operation. docs/formats.md has the details.
//
// The pretty format puts the progressEventType first, its group in a colour of its own, then
// the resource, a short trace id, the tracectx transaction id and the details as key=value:
//
//	14:03:07.412 INF ansible/TaskStarted  Play/site.yml  4bf92f35  tx=tx-1  taskName="Install nginx" argsHidden=false
//	14:03:09.020 INF provisioning  Cluster/foo  False (Provisioning) → True (Provisioned) "Cluster is ready"
//
// The JSON format is Ignition's schema (eventType, progressEventType, nested details) plus
// @timestamp, level, traceId, spanId and every tracectx.* attribute as a top-level field.
//
// Recipes:
//   - No colour: WithColor(ColorNever), or NO_COLOR=1 in the environment (which wins over every
//     option). Colour even through a pipe (e.g. into less -R): WithColor(ColorAlways).
//   - No time, for examples and golden tests: WithoutTime().
//   - Another destination: WithWriter(w). Each Export writes its batch with one Write; wrap w
//     in a bufio.Writer and ForceFlush/Shutdown flush it.
//   - The live view in your own providers: exp, _ := NewLive(); then
//     sdklog.NewLoggerProvider(sdklog.WithProcessor(exp.LogProcessor())) and
//     sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(exp.SpanProcessor())), and
//     Shutdown the logger provider at the end (the exporter then prints what is left and stops
//     its goroutine). LogProcessor keeps records in order with spans and Output; a
//     BatchProcessor works too.
//   - A tool's output, a notice or a slog.TextHandler next to the live view: write to
//     exp.Output() (otelbridge: Telemetry.Output()), never to os.Stderr directly; each line is
//     printed above the live area. For exec.Cmd: cmd.Stdout, cmd.Stderr = exp.Output(),
//     exp.Output().
//   - Plain lines on a terminal (a screen recorder, a pager): WithLiveMode(LivePlain), or
//     TERM=dumb. The live area on a writer that is a pty you drive: WithLiveMode(LiveTerminal)
//     and WithTerminalSize. Flat lines, one per record, on a terminal too:
//     OTEL_LOGS_EXPORTER=pretty.
//
// Nothing from a record reaches the output raw: control characters, DEL, ANSI escape
// sequences, C1 controls and invalid UTF-8 in keys, values, bodies and event names are escaped
// (\x1b, \n, \u202e), so a log line cannot drive the terminal. Output removes the escape
// sequences of a tool's output and escapes its other control characters.
package prettyexporter
