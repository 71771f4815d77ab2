package cli

import (
	"context"
	"flag"
)

type transitionOptions struct {
	commonOptions
	stream, status, reason, message     string
	prevStatus, prevReason, prevMessage string
	time                                string
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

func runTransition(ctx context.Context, args []string, stdio stdio) Status {
	fs, o := newTransitionFlags()
	if st, done := parseCommand(transitionCommand, fs, args, stdio); done {
		return st
	}
	m, err := o.build()
	if err != nil {
		return usageError(transitionCommand, stdio.stderr, err)
	}
	return deliver(ctx, m, &o.commonOptions, stdio.stderr)
}

func (o *transitionOptions) build() (*message, error) {
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
