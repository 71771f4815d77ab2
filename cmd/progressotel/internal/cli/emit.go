package cli

import (
	"context"
	"flag"
	"io"
)

type emitOptions struct {
	commonOptions
	typ      string
	details  string
	detail   pairs
	severity string
	time     string
}

func newEmitFlags() (*flag.FlagSet, *emitOptions) {
	o := &emitOptions{}
	fs := flag.NewFlagSet("emit", flag.ContinueOnError)
	fs.StringVar(&o.typ, "type", "", "the progressEventType, `group/Name` (required): ansible/TaskStarted, common/Progress, ...")
	fs.StringVar(&o.details, "details", "", "the details, a JSON `object`; @file reads it from a file, - from stdin")
	fs.Var(&o.detail, "detail", "set one detail (repeatable): `key=value` for a string, key:=json for any JSON value; wins over --details")
	fs.StringVar(&o.severity, "severity", "info", "`level`: trace, debug, info, warn, error, fatal, or a number 1-24")
	fs.StringVar(&o.time, "time", "", "the event's `time`, RFC 3339 (default: now)")
	o.commonOptions.register(fs)
	return fs, o
}

var emitCommand = &command{
	name:     "emit",
	synopsis: "record one progress event in the current trace",
	usage:    "progressotel emit --type group/Name [--details '{json}'] [flags]",
	description: `Records one ResourceTransitionProgressEvent: a progressEventType and its
details, in the trace of TRACEPARENT (and with the tracectx values of
X_TRACECTX_*) from the environment.

Inside 'progressotel run', it hands the event to the run over its socket
(PROGRESSOTEL_SOCKET): no exporter of its own, the run's envelope for what
the flags leave unset, and the run's contiguous sequence numbers. Outside
one, it exports the event itself, and does nothing but warn when no exporter
is configured.

Exit status: 0 when the event was taken or telemetry is unavailable (a
warning says why), 2 for invalid input (nothing is emitted).`,
	flags: func() *flag.FlagSet { fs, _ := newEmitFlags(); return fs },
	env:   emitEnv,
}

func runEmit(ctx context.Context, args []string, stdio stdio) Status {
	fs, o := newEmitFlags()
	if st, done := parseCommand(emitCommand, fs, args, stdio); done {
		return st
	}
	m, err := o.message(stdio.stdin)
	if err != nil {
		return usageError(emitCommand, stdio.stderr, err)
	}
	return deliver(ctx, m, &o.commonOptions, stdio.stderr)
}

// message checks the flags and builds the event.
func (o *emitOptions) message(stdin io.Reader) (*message, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if o.typ == "" {
		return nil, invalidf("--type is required")
	}
	sev, err := parseSeverity(o.severity)
	if err != nil {
		return nil, err
	}
	t, err := parseTime(o.time)
	if err != nil {
		return nil, err
	}
	details, err := buildDetails(o.details, o.detail, stdin)
	if err != nil {
		return nil, err
	}
	m := &message{V: protocolVersion, Kind: kindEvent, Time: t, Type: o.typ, Details: details,
		Severity: sev, Envelope: o.envelope.envelope()}
	return m, m.validate()
}
