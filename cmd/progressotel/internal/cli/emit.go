package cli

import (
	"context"
	"flag"
	"io"
)

type emitOptions struct {
	commonOptions
	typ, details, severity, time string
	detail                       pairs
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

func runEmit(ctx context.Context, args []string, s stdio) Status {
	fs, o := newEmitFlags()
	return runMessage(ctx, emitCommand, fs, &o.commonOptions, args, s, o.build)
}

// runMessage runs emit or transition: it parses the flags, builds the
// message (build checks them) and delivers it.
func runMessage(ctx context.Context, c *command, fs *flag.FlagSet, o *commonOptions, args []string, s stdio,
	build func(stdin io.Reader) (*message, error)) Status {
	if st, done := parseCommand(c, fs, args, s); done {
		return st
	}
	m, err := build(s.stdin)
	if err != nil {
		return usageError(c, s.stderr, err)
	}
	return deliver(ctx, m, o, s.stderr)
}

// build checks the flags and builds the event.
func (o *emitOptions) build(stdin io.Reader) (*message, error) {
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

type transitionOptions struct {
	commonOptions
	stream, status, reason, message, time string
	prevStatus, prevReason, prevMessage   string
}

func newTransitionFlags() (*flag.FlagSet, *transitionOptions) {
	o := &transitionOptions{}
	fs := flag.NewFlagSet("transition", flag.ContinueOnError)
	fs.StringVar(&o.stream, "stream", "", "the condition `stream` (required): provisioning, lifecycle, or another lower-case name")
	fs.StringVar(&o.status, "status", "", "the condition's new `status` (required): True, False, Unknown")
	fs.StringVar(&o.reason, "reason", "", "its `reason`: Provisioning, Provisioned, Errored, ...")
	fs.StringVar(&o.message, "message", "", "its user-safe `text` (never a raw error)")
	fs.StringVar(&o.prevStatus, "previous-status", "", "the condition's `status` before this transition, when known")
	fs.StringVar(&o.prevReason, "previous-reason", "", "its `reason` before")
	fs.StringVar(&o.prevMessage, "previous-message", "", "its `text` before")
	fs.StringVar(&o.time, "time", "", "the transition's `time`, RFC 3339 (default: now)")
	o.commonOptions.register(fs)
	return fs, o
}

var transitionCommand = &command{
	name:     "transition",
	synopsis: "record one condition transition (provisioning, lifecycle, ...)",
	usage:    "progressotel transition --stream provisioning --status True --reason Provisioned [--message text] [flags]",
	description: `Records a Kubernetes-style condition transition on a stream, as
progress.RecordTransition does in Go: the stream is the record's event name,
the new condition and, with --previous-*, the one before. It does no
edge-triggering: call it when the condition has changed, after the change
was persisted.

Inside 'progressotel run' it goes through the run, outside one it is
exported directly, as with emit. Exit status: 0, or 2 for invalid input.`,
	flags: func() *flag.FlagSet { fs, _ := newTransitionFlags(); return fs },
	env:   emitEnv,
}

func runTransition(ctx context.Context, args []string, s stdio) Status {
	fs, o := newTransitionFlags()
	return runMessage(ctx, transitionCommand, fs, &o.commonOptions, args, s, o.build)
}

// build checks the flags and builds the transition.
func (o *transitionOptions) build(io.Reader) (*message, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	t, err := parseTime(o.time)
	if err != nil {
		return nil, err
	}
	m := &message{V: protocolVersion, Kind: kindTransition, Time: t, Stream: o.stream,
		Status: o.status, Reason: o.reason, Message: o.message, Envelope: o.envelope.envelope()}
	if o.prevStatus != "" || o.prevReason != "" || o.prevMessage != "" {
		m.Previous = &condition{Status: o.prevStatus, Reason: o.prevReason, Message: o.prevMessage}
	}
	return m, m.validate()
}
