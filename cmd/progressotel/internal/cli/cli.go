// Package cli is the progressotel command: run, emit, transition and their
// help and shell completion. package main only calls Main and exits with
// the Status it returns.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/progressotel/progressotel/cmd/progressotel/internal/handoff"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

// command is one subcommand.
type command struct {
	name, synopsis, usage, description string
	// flags returns a fresh FlagSet of the command, for help and
	// completion.
	flags func() *flag.FlagSet
	run   func(ctx context.Context, args []string, stdio stdio) Status
	// env lists the environment variables the command reads or sets.
	env []envVar
	// choices lists the values a flag completes to.
	choices map[string][]string
}

// stdio are the command's standard streams.
type stdio struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// commands in the order of the help.
var commands []*command

func init() {
	commands = []*command{runCommand, emitCommand, transitionCommand, viewCommand, completionCommand, versionCommand}
	// Set here: each refers to its command, for its help.
	runCommand.run, emitCommand.run, transitionCommand.run = runRun, runEmit, runTransition
	completionCommand.run = runCompletion
	viewCommand.run = runView
	emitCommand.choices = map[string][]string{"severity": severityNames}
	transitionCommand.choices = map[string][]string{
		"stream": {progress.StreamProvisioning, progress.StreamLifecycle},
		"status": {"True", "False", "Unknown"}, "previous-status": {"True", "False", "Unknown"},
	}
}

// Main runs progressotel with args (without the program name) and returns
// how it must end.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) Status {
	s := stdio{stdin, stdout, stderr}
	if len(args) == 0 {
		printMainHelp(stderr)
		return Status{Code: ExitUsage}
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 {
			if c := lookup(args[1]); c != nil {
				printHelp(stdout, c)
				return Status{}
			}
		}
		printMainHelp(stdout)
		return Status{}
	case "-version", "--version":
		return versionCommand.run(ctx, nil, s)
	}
	c := lookup(args[0])
	if c == nil {
		fmt.Fprintf(stderr, "progressotel: unknown command %q\n\n", args[0])
		printMainHelp(stderr)
		return Status{Code: ExitUsage}
	}
	return c.run(ctx, args[1:], s)
}

func lookup(name string) *command {
	if i := slices.IndexFunc(commands, func(c *command) bool { return c.name == name }); i >= 0 {
		return commands[i]
	}
	return nil
}

// parseCommand parses a command's flags. done is true when the command
// must end with st: help was asked for, or the flags are invalid.
func parseCommand(c *command, fs *flag.FlagSet, args []string, s stdio) (st Status, done bool) {
	fs.SetOutput(io.Discard)
	switch err := fs.Parse(args); {
	case err == nil:
		return Status{}, false
	case errors.Is(err, flag.ErrHelp):
		printHelp(s.stdout, c)
		return Status{}, true
	default:
		return usageError(c, s.stderr, err), true
	}
}

// usageError reports invalid input: exit status 2.
func usageError(c *command, stderr io.Writer, err error) Status {
	msg := strings.TrimPrefix(err.Error(), errInvalid.Error()+": ")
	fmt.Fprintf(stderr, "progressotel %s: %s\n", c.name, msg)
	fmt.Fprintf(stderr, "Usage: %s\nRun 'progressotel %s --help' for every flag.\n", c.usage, c.name)
	return Status{Code: ExitUsage}
}

func printMainHelp(w io.Writer) {
	fmt.Fprint(w, `progressotel reports the progress of infrastructure automation the
OpenTelemetry way, for drivers and scripts in any language: it runs a tool
inside a span with progress events around it, and records events and
condition transitions from the shell, in the trace of TRACEPARENT and with
the request's tracectx values.

Usage: progressotel <command> [flags]

Commands:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.synopsis)
	}
	fmt.Fprint(w, `
Run 'progressotel <command> --help' for its flags and environment variables.
Exporters are configured as in every OpenTelemetry SDK (OTEL_LOGS_EXPORTER,
OTEL_EXPORTER_OTLP_ENDPOINT, ...). Documentation: docs/cli.md.
`)
}

// printHelp prints a command's usage, every flag and every environment
// variable it reads or sets.
func printHelp(w io.Writer, c *command) {
	fmt.Fprintf(w, "Usage: %s\n\n%s\n", c.usage, c.description)
	fs := c.flags()
	var flags [][2]string
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		left := "--" + f.Name
		if name != "" {
			left += " " + name
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "[]" {
			usage += " (default " + f.DefValue + ")"
		}
		flags = append(flags, [2]string{left, usage})
	})
	if len(flags) > 0 {
		fmt.Fprint(w, "\nFlags:\n")
		printTable(w, flags)
	}
	if len(c.env) > 0 {
		fmt.Fprint(w, "\nEnvironment:\n")
		rows := make([][2]string, len(c.env))
		for i, e := range c.env {
			rows[i] = [2]string{e.name, e.meaning}
		}
		printTable(w, rows)
	}
}

// printTable prints two columns, the second wrapped under itself.
func printTable(w io.Writer, rows [][2]string) {
	width := 0
	for _, r := range rows {
		width = max(width, len(r[0]))
	}
	width = min(width, 34)
	for _, r := range rows {
		left := r[0]
		if len(left) > width {
			fmt.Fprintf(w, "  %s\n", left)
			left = ""
		}
		for _, l := range wrap(r[1], 78-width-4) {
			fmt.Fprintf(w, "  %-*s  %s\n", width, left, l)
			left = ""
		}
	}
}

func wrap(s string, width int) []string {
	width = max(width, 30)
	lines := []string{""}
	for _, word := range strings.Fields(s) {
		switch last := &lines[len(lines)-1]; {
		case *last == "":
			*last = word
		case len(*last)+1+len(word) > width:
			lines = append(lines, word)
		default:
			*last += " " + word
		}
	}
	return lines
}

var versionCommand = &command{
	name:        "version",
	synopsis:    "print the version",
	usage:       "progressotel version",
	description: "Prints the version of progressotel and of the module it was built from.",
	flags:       func() *flag.FlagSet { return flag.NewFlagSet("version", flag.ContinueOnError) },
	run: func(_ context.Context, _ []string, s stdio) Status {
		v := "(devel)"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
			v = bi.Main.Version
		}
		fmt.Fprintf(s.stdout, "progressotel %s (progress %s)\n", v, wire.ScopeVersion)
		return Status{}
	},
}

// envVar is an environment variable, for --help and docs/cli.md.
type envVar struct{ name, meaning string }

// exporterEnv are the OpenTelemetry variables every command reads through
// otelbridge.Setup.
var exporterEnv = []envVar{
	{"OTEL_LOGS_EXPORTER", "comma-separated exporters: live (a tree per operation on a terminal, the command's output above it), pretty, json, console (all on stderr, or --output: never in the command's stdout), otlp, none. Unset: otlp alone when an OTLP endpoint is set, else nothing is exported, with one warning"},
	{"OTEL_EXPORTER_OTLP_ENDPOINT", "the collector, e.g. http://127.0.0.1:4318; setting it alone exports OTLP and nothing locally (also OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, _TRACES_ENDPOINT)"},
	{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf (default) or grpc"},
	{"OTEL_EXPORTER_OTLP_HEADERS", "headers of every export, e.g. Authorization=Bearer%20... (also _INSECURE, _CERTIFICATE, _TIMEOUT)"},
	{"OTEL_SERVICE_NAME", "service.name of the resource (default: --component, else progressotel); OTEL_RESOURCE_ATTRIBUTES adds to it"},
	{"OTEL_BLRP_MAX_QUEUE_SIZE", "the batch processor's queue (and the other OTEL_BLRP_* settings)"},
	{"OTEL_SDK_DISABLED", "true: export nothing, quietly"},
	{"NO_COLOR", "no colour in the live view and the pretty format"},
}

// contextEnv are the variables the trace context is read from.
var contextEnv = []envVar{
	{"TRACEPARENT", "W3C trace context of the caller: the trace and parent span of what is recorded"},
	{"TRACESTATE", "W3C trace state, with TRACEPARENT"},
	{"BAGGAGE", "W3C baggage"},
	{"X_TRACECTX_<KEY>", "a tracectx value of the request, stamped as tracectx.<key> on every record: X_TRACECTX_TRANSACTIONID, X_TRACECTX_TENANTID, ... ('-', '.', '_' in a key are _2D, _2E, _5F)"},
}

var ownEnv = []envVar{
	{envOutput, "the default of --output"},
	{envShutdownTimeout, "the default of --shutdown-timeout (a Go duration: 5s, 500ms)"},
}

var emitEnv = slices.Concat(
	[]envVar{{handoff.EnvSocket, "set by 'progressotel run' for its child: the run's socket, through which the event goes"}},
	contextEnv, ownEnv, exporterEnv)

var runEnv = slices.Concat(contextEnv, ownEnv, exporterEnv,
	[]envVar{
		{"OTEL_TRACES_EXPORTER", "none: keep the run's spans local even when an OTLP endpoint is set"},
		{"(set for the child)", "TRACEPARENT, TRACESTATE, BAGGAGE and X_TRACECTX_* of the run's span, and " + handoff.EnvSocket + " for its emits"},
	})
