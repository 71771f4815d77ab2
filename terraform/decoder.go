package terraform

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/semconv/v1.43.0/cicdconv"
	"go.opentelemetry.io/otel/trace"

	outcomes "github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/internal/kit/adapter"
	"github.com/progressotel/progressotel/internal/kit/procctl"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

const (
	// suppressedOutput is what the tool prints instead of a provisioner's
	// output when its configuration holds a sensitive value.
	suppressedOutput = "(output suppressed due to sensitive value in config)"
	// withheldDetail replaces the detail of a diagnostic about such a
	// resource: the tool quotes the provisioner's command and output there.
	withheldDetail  = "(detail withheld: the resource's provisioner configuration holds a sensitive value)"
	noEnd           = "the tool reported no end" // the status of a span the tool never ended
	cancelledStatus = "cancelled"                // of one a stop cut short
	interruptNotice = "Interrupt received"       // begins the tool's log message on SIGINT
)

// decoder turns machine-readable UI messages, one line at a time, into
// progress events and spans, live. The heartbeat shares it (mu).
type decoder struct {
	cfg   *config
	scrub *scrubber
	run   context.Context // the caller's context: cancelled when the run is stopped
	msg   message         // reused between lines
	mu    sync.Mutex      // serialises the lines and the heartbeat (heartbeat.go)

	spanName  string
	spanAttrs []attribute.KeyValue
	op        *adapter.Operation // the command span, once begun
	cmdCtx    context.Context    // the context of the events: op.Ctx, or the init span's during init
	last      time.Time          // the tool's last timestamp

	ops     map[string]*span // open apply operations, by address
	refresh map[string]*span // open refreshes, by address
	provs   map[string]*span // open provisioner runs, by address and provisioner
	held    []*span          // errored operations and provisioner runs, ended at finish (see hold)
	kids    []string         // the outcomes of the operations and refreshes ended (outcomes.Of)
	reports bool             // a run of a subcommand whose stream ends with a final message (cmdline.TofuReporting)

	applying    bool // an apply_start was seen: the stream is an apply's or a destroy's
	final       bool // a final message (a change summary, the outputs, an init's success) came after the last start
	interrupted bool // the tool reported an interrupt
	sensitive   map[string]bool
	diags       map[diagKey]int // index in res.Diagnostics of each distinct diagnostic

	res Result
}

// diagKey is what makes two diagnostics the same.
type diagKey struct {
	severity, summary, detail, address string
	rng                                Range
}

// span is an open span of a resource operation, refresh or provisioner
// run.
type span struct {
	addr, action string
	rf           resourceFields
	ctx          context.Context
	span         trace.Span
	open         map[string]*span // the open spans it is one of, under key
	key          string
	end          time.Time // when it errored
	outcome      string    // how it errored: outcomes.Failed or the stop's
	status       string    // why it failed, for its Error status, set when it ends
	diagnosed    bool      // an error diagnostic said why (status)
	parent       *span     // the operation a provisioner run is of
	kids         []string  // the outcomes of its provisioner runs (outcomes.Of)
	heard        time.Time // the wall clock when a message about it was last read (the heartbeat's)
	opened       time.Time // the wall clock when its start was read
	task         bool      // a task's span (startTask): a resource operation or refresh
}

func newDecoder(ctx context.Context, cfg *config, operation, spanName string, attrs ...attribute.KeyValue) *decoder {
	return &decoder{
		cfg:       cfg,
		scrub:     newScrubber(cfg.Redactor, cfg.sensitive),
		run:       ctx,
		spanName:  spanName,
		spanAttrs: attrs,
		ops:       map[string]*span{},
		refresh:   map[string]*span{},
		provs:     map[string]*span{},
		sensitive: map[string]bool{},
		diags:     map[diagKey]int{},
		res:       Result{Operation: operation, ExitCode: -1, Total: progress.UnknownTotal},
	}
}

// begin starts the command span, the parent of every other (the run's span
// of the CI/CD conventions: "RUN <command>"), once, and records
// common/OperationStarted in it.
func (d *decoder) begin(t time.Time) {
	if d.op != nil {
		return
	}
	d.res.Start = t
	op := d.res.Operation
	d.op = d.cfg.StartRun(context.WithoutCancel(d.run), adapter.Run{Operation: op, Pipeline: op, OldSpan: d.spanName,
		Old: []attribute.KeyValue{attribute.String("terraform.operation", op)}}, t, d.spanAttrs...)
	d.cmdCtx = d.op.Ctx
}

// handle decodes one line and records what it means. A known type without
// its object is generic, like an unknown one.
func (d *decoder) handle(line []byte) {
	m := &d.msg
	if !m.parse(line) {
		d.cfg.Show(string(line))
		d.skip(line)
		return
	}
	d.cfg.Show(m.Message)
	m.scrubValues(d.scrub)
	d.res.Messages++
	t := m.time(time.Now())
	d.begin(t)
	if t.After(d.last) {
		d.last = t
	}
	// An init's last word: "OpenTofu has been successfully initialized!", or
	// "... initialized in an empty directory!".
	if msg := strings.TrimSpace(m.Message); (m.Type == "output" || m.Type == "init_output") &&
		(strings.HasSuffix(msg, " successfully initialized!") ||
			strings.HasSuffix(msg, " initialized in an empty directory!")) {
		d.final = true
	}

	switch {
	case m.Type == "version":
		d.version(m, t)
	case m.Type == "log" || m.Type == "":
		if strings.HasPrefix(strings.TrimSpace(m.Message), interruptNotice) {
			d.interrupt(t)
		}
		d.emit(d.cmdCtx, TypeLog, levelSeverity[m.Level], t,
			genericDetails{Level: m.Level, Message: oneLine(d.scrub.value(m.Message))})
	case m.Type == "diagnostic" && m.Diag != nil:
		d.diagnostic(*m.Diag, t)
	case (m.Type == "planned_change" || m.Type == "resource_drift") && m.Change != nil:
		d.final = false
		c := m.Change
		det := changeDetails{resourceFields: c.Resource.fields(), Action: c.Action, Reason: c.Reason}
		if c.PreviousResource != nil {
			det.PreviousAddress = c.PreviousResource.Addr
		}
		if c.Importing != nil {
			det.ImportingID = c.Importing.ID
		}
		d.emit(d.cmdCtx, knownTypes[m.Type], 0, t, det)
	case m.Type == "change_summary" && m.Changes != nil:
		d.changeSummary(*m.Changes, t)
	case m.Type == "outputs":
		d.outputs(m.Outputs, t)
	case m.Hook != nil && slices.Contains([]string{"apply_start", "apply_progress", "apply_complete", "apply_errored",
		"provision_start", "provision_progress", "provision_complete", "provision_errored",
		"refresh_start", "refresh_complete"}, m.Type):
		d.hook(m, t)
	default:
		d.generic(m, t)
	}
}

func (d *decoder) version(m *message, t time.Time) {
	det := versionDetails{Tool: "tofu", Version: m.Tofu, UI: m.UI}
	if m.Tofu == "" {
		det.Tool, det.Version = "terraform", m.Terraform
	}
	if det.Version == "" {
		det.Tool = ""
	} else {
		d.res.Tool, d.res.Version = det.Tool, det.Version
		d.op.Span.SetAttributes(attribute.String("terraform.tool", det.Tool), attribute.String("terraform.version", det.Version))
	}
	d.emit(d.cmdCtx, TypeVersion, 0, t, det)
}

// diagnostic records a diagnostic once; a repeat word for word is counted
// in Diagnostic.Repeated.
func (d *decoder) diagnostic(diag Diagnostic, t time.Time) {
	diag.Summary = oneLine(d.scrub.text(diag.Summary))
	diag.Detail = oneLine(d.scrub.text(diag.Detail))
	if diag.Address != "" && d.sensitive[diag.Address] && diag.Detail != "" {
		diag.Detail = withheldDetail
	}
	key := diagKey{diag.Severity, diag.Summary, diag.Detail, diag.Address, Range{}}
	if diag.Range != nil {
		key.rng = *diag.Range
	}
	if i, seen := d.diags[key]; seen {
		d.res.Diagnostics[i].Repeated++
		return
	}
	d.diags[key] = len(d.res.Diagnostics)
	d.res.Diagnostics = append(d.res.Diagnostics, diag)

	// The span of the operation it is about takes it: the status says why.
	op, sev := d.diagnosed(diag.Address), log.SeverityWarn
	if diag.Severity == SeverityError {
		sev = log.SeverityError
		if op != nil {
			op.status, op.diagnosed = diag.Summary, true
		}
	}
	if op != nil {
		op.span.AddEvent("terraform.diagnostic", trace.WithTimestamp(t), trace.WithAttributes(
			attribute.String("terraform.diagnostic.severity", diag.Severity),
			attribute.String("terraform.diagnostic.summary", diag.Summary),
			attribute.String("terraform.diagnostic.detail", diag.Detail)))
	}
	d.emit(d.ctxOf(op), TypeDiagnostic, sev, t, diag)
}

// diagnosed returns the span a diagnostic about addr belongs to: an
// errored operation's, else an open one's.
func (d *decoder) diagnosed(addr string) *span {
	if addr == "" {
		return nil
	}
	if i := slices.IndexFunc(d.held, func(f *span) bool { return f.task && f.addr == addr }); i >= 0 {
		return d.held[i]
	}
	return d.ops[addr]
}

func (d *decoder) changeSummary(cs ChangeSummary, t time.Time) {
	d.emit(d.cmdCtx, TypeChangeSummary, 0, t, cs)
	d.final = true
	if cs.Operation != "plan" {
		d.res.Applied = &cs
		return
	}
	d.res.Plan = &cs
	if d.res.Total = max(cs.Add+cs.Change+cs.Remove, 0); d.res.Total > 0 {
		d.progress(t)
	}
}

// outputs records the root module's outputs as a list, not a map by name:
// the Recorder would replace an entry whose key looks secret
// ("password_out") whole. Its value is redacted here instead.
func (d *decoder) outputs(raw json.RawMessage, t time.Time) {
	var outs map[string]outputMsg
	if err := json.Unmarshal(raw, &outs); err != nil {
		d.generic(&d.msg, t)
		return
	}
	d.final = true // a refresh's last message, and an apply's after its summary
	det := outputsDetails{Outputs: make([]outputDetails, 0, len(outs))}
	res := make(map[string]Output, len(outs))
	for _, name := range slices.Sorted(maps.Keys(outs)) {
		o := outs[name]
		od := outputDetails{Name: name, Sensitive: o.Sensitive, Action: o.Action}
		// A sensitive output's value is never read, even when a stream
		// carries one: the tool itself never writes it.
		if !o.Sensitive && len(o.Value) > 0 {
			var v any
			switch {
			case json.Unmarshal(o.Value, &v) != nil:
			case d.cfg.Redactor.SecretKey(name):
				od.Value = wire.Redacted
			default:
				od.Value = d.scrubValue(v)
			}
		}
		det.Outputs = append(det.Outputs, od)
		res[name] = Output{Sensitive: o.Sensitive, Action: o.Action, Value: od.Value}
	}
	d.res.Outputs = res
	d.emit(d.cmdCtx, TypeOutputs, 0, t, det)
}

// scrubValue replaces the sensitive values in the strings of a decoded
// JSON value.
func (d *decoder) scrubValue(v any) any {
	if d.scrub.values == nil {
		return v
	}
	switch x := v.(type) {
	case string:
		return d.scrub.value(x)
	case []any:
		for i := range x {
			x[i] = d.scrubValue(x[i])
		}
	case map[string]any:
		for k, e := range x {
			x[k] = d.scrubValue(e)
		}
	}
	return v
}

// interruptWindow is how long before the interrupt notice an error is the
// interrupt's doing: Ctrl-C reaches the provisioner commands too, at once.
const interruptWindow = time.Second

// interrupt records the tool's interrupt notice at t: from now on what
// errors is cancelled, and so is what errored within interruptWindow
// before (its event was recorded already, at ERROR).
func (d *decoder) interrupt(t time.Time) {
	d.interrupted = true
	for _, f := range d.held {
		if f.outcome != outcomes.Failed || t.Sub(f.end) > interruptWindow {
			continue
		}
		f.outcome = d.stopOutcome()
		if !f.diagnosed {
			f.status = cancelledStatus
		}
		if !f.task { // a provisioner run
			continue
		}
		if i := slices.Index(d.res.ErroredResources, f.addr); i >= 0 {
			d.res.ErroredResources = slices.Delete(d.res.ErroredResources, i, i+1)
		}
		d.res.CancelledResources = append(d.res.CancelledResources, f.addr)
		if counted(f.action) {
			d.res.Errored--
			d.res.Cancelled++
		}
	}
}

// stopOutcome is the outcome of what a stop cut short, and of what errors
// while the run stops.
func (d *decoder) stopOutcome() string {
	if errors.Is(d.run.Err(), context.DeadlineExceeded) {
		return outcomes.TimedOut
	}
	return outcomes.Cancelled
}

// errored is how what errors now ends: failed, with status, at ERROR; or,
// while the run stops (its context is done, or an interrupt), at WARN.
func (d *decoder) errored(status string) (oc, st string, sev log.Severity, stopped bool) {
	if d.interrupted || d.run.Err() != nil {
		return d.stopOutcome(), cancelledStatus, log.SeverityWarn, true
	}
	return outcomes.Failed, status, log.SeverityError, false
}

// hook records a hook message in the span of what it is about.
func (d *decoder) hook(m *message, t time.Time) {
	h := m.Hook
	addr, rf, typ := h.Resource.Addr, h.Resource.fields(), knownTypes[m.Type]
	op := d.ops[addr]
	if op != nil {
		op.heard = time.Now()
	}
	switch m.Type {
	case "apply_start":
		d.applying, d.final = true, false
		if op != nil {
			// One operation per address at a time: the first's end was lost.
			d.end(op, outcomes.Failed, noEnd, t)
		}
		op = d.startTask(d.ops, addr, h.Action, rf, t)
		d.emit(op.ctx, typ, 0, t,
			applyStartedDetails{resourceFields: rf, Action: h.Action, IDKey: h.IDKey, IDValue: h.IDValue})
	case "apply_progress":
		d.emit(d.ctxOf(op), typ, 0, t,
			elapsedDetails{resourceFields: rf, Action: h.Action, ElapsedSeconds: h.Elapsed})
	case "apply_complete":
		d.emit(d.ctxOf(op), typ, 0, t, applyCompletedDetails{
			resourceFields: rf, Action: h.Action, IDKey: h.IDKey, IDValue: h.IDValue, ElapsedSeconds: h.Elapsed})
		oc := outcomes.OK
		if counted(h.Action) {
			oc = outcomes.Changed
			d.res.Completed++
		}
		if op != nil {
			if h.IDKey != "" {
				op.span.SetAttributes(attribute.String("terraform.resource.id", h.IDValue))
			}
			d.end(op, oc, "", t)
		}
		if oc == outcomes.Changed {
			d.progress(t)
		}
	case "apply_errored":
		oc, status, sev, stopped := d.errored(h.Action + " errored")
		d.emit(d.ctxOf(op), typ, sev, t, elapsedDetails{
			resourceFields: rf, Action: h.Action, ElapsedSeconds: h.Elapsed, Cancelled: stopped})
		if op != nil {
			d.hold(op, oc, status, t) // the diagnostics that say why come last
		}
		list, n := &d.res.ErroredResources, &d.res.Errored
		if stopped { // stopped, not broken: counted apart
			list, n = &d.res.CancelledResources, &d.res.Cancelled
		}
		*list = append(*list, addr)
		if counted(h.Action) {
			*n++
		}
	case "provision_start":
		d.final = false
		key := addr + "\x00" + h.Provisioner // a provisioner run's
		if prev := d.provs[key]; prev != nil {
			d.end(prev, outcomes.Failed, noEnd, t)
		}
		ctx, s := d.cfg.Tracer.Start(d.ctxOf(op), "provision "+h.Provisioner, trace.WithTimestamp(t),
			trace.WithAttributes(attribute.String("terraform.resource.address", addr),
				attribute.String("terraform.provisioner", h.Provisioner)))
		p := d.opened(&span{addr: addr, ctx: ctx, span: s, parent: op}, d.provs, key)
		d.emit(p.ctx, typ, 0, t, provisionDetails{resourceFields: rf, Provisioner: h.Provisioner})
	case "provision_progress":
		key := addr + "\x00" + h.Provisioner
		if h.Output == suppressedOutput {
			d.sensitive[addr] = true
		}
		d.emit(d.ctxOf(d.provs[key], op), typ, 0, t, provisionOutputDetails{
			resourceFields: rf, Provisioner: h.Provisioner, Output: d.scrub.line(key, h.Output)})
	case "provision_complete", "provision_errored":
		key := addr + "\x00" + h.Provisioner
		p := d.provs[key]
		det := provisionDetails{resourceFields: rf, Provisioner: h.Provisioner}
		oc, status, sev := outcomes.OK, "", log.Severity(0)
		if m.Type == "provision_errored" {
			oc, status, sev, det.Cancelled = d.errored(h.Provisioner + " errored")
		}
		d.emit(d.ctxOf(p, op), typ, sev, t, det)
		switch {
		case p == nil:
		case oc == outcomes.Failed: // an interrupt notice may follow (see hold)
			d.hold(p, oc, status, t)
		default:
			d.end(p, oc, status, t)
		}
		d.scrub.endStream(key)
	case "refresh_start":
		d.final = false
		if prev := d.refresh[addr]; prev != nil {
			d.end(prev, outcomes.OK, "", t)
		}
		r := d.startTask(d.refresh, addr, "refresh", rf, t)
		d.emit(r.ctx, typ, 0, t, refreshDetails{resourceFields: rf, IDKey: h.IDKey, IDValue: h.IDValue})
	case "refresh_complete":
		r := d.refresh[addr]
		d.emit(d.ctxOf(r), typ, 0, t, refreshDetails{resourceFields: rf, IDKey: h.IDKey, IDValue: h.IDValue})
		if r != nil {
			d.end(r, outcomes.OK, "", t)
		}
	}
}

// opened keeps s open in open under key, until end.
func (d *decoder) opened(s *span, open map[string]*span, key string) *span {
	now := time.Now()
	s.open, s.key, s.heard, s.opened = open, key, now, now
	open[key] = s
	return s
}

// hold keeps what errored at t, with its outcome and status, to be ended
// when the run ends: the diagnostics that say why come last, and an
// interrupt notice may still make it cancelled.
func (d *decoder) hold(s *span, oc, status string, t time.Time) {
	delete(s.open, s.key)
	s.outcome, s.end = oc, t
	if !s.diagnosed {
		s.status = status
	}
	d.held = append(d.held, s)
}

// end ends a span at t with the outcome its own (oc) and its provisioner
// runs' give it (outcomes.Of), and, for a failure or a time limit, an
// Error status saying why: an error diagnostic's summary, else status. A
// cancelled span has no Error status: it was stopped, it did not fail. A
// task's span ends through the kit's EndTask, which maps the outcome to
// the task's result.
func (d *decoder) end(s *span, oc, status string, t time.Time) {
	if s.open[s.key] == s {
		delete(s.open, s.key)
	}
	oc = outcomes.Of(oc, s.kids...)
	if s.parent != nil {
		s.parent.kids = append(s.parent.kids, oc)
	}
	if s.diagnosed || status == "" {
		status = s.status
	}
	switch oc {
	case outcomes.Failed, outcomes.TimedOut, outcomes.Unreachable:
		status = cmp.Or(status, oc)
	default:
		status = ""
	}
	s.span.SetAttributes(attribute.String(outcomes.Key, oc))
	if s.task {
		d.kids = append(d.kids, oc)
		d.op.EndTask(s.span, t, oc, status)
		return
	}
	if status != "" {
		s.span.SetStatus(codes.Error, status)
	}
	s.span.End(trace.WithTimestamp(t))
}

// counted reports whether an operation counts toward the plan's total: a
// create, update or delete does, a read (left out of the summary) not.
func counted(action string) bool {
	return slices.Contains([]string{"create", "update", "delete", "replace"}, action)
}

// progress records common/Progress: the operations that completed of the
// plan's total, raised if more complete than were announced.
func (d *decoder) progress(t time.Time) {
	if d.res.Plan != nil && d.res.Completed > d.res.Total {
		d.res.Total = d.res.Completed
	}
	d.recordProgress(d.res.Completed, t)
}

func (d *decoder) recordProgress(done int, t time.Time) {
	evt := progress.Progress(int64(done), int64(d.res.Total), ProgressUnit)
	evt.Time = t
	d.cfg.Record(d.cmdCtx, evt)
}

func (d *decoder) generic(m *message, t time.Time) {
	det := genericDetails{Level: m.Level, Message: oneLine(d.scrub.value(m.Message))}
	if m.Hook != nil {
		det.Address, det.Action = m.Hook.Resource.Addr, m.Hook.Action
	}
	typ := EventType(m.Type)
	if knownTypes[m.Type] != "" {
		typ = TypeMessage // a known type without its object: keep each type's shape
	}
	if typ == TypeMessage {
		det.Type = m.Type
	}
	d.emit(d.cmdCtx, typ, levelSeverity[m.Level], t, det)
}

// ctxOf is the context of the first span that is open, else the command's.
func (d *decoder) ctxOf(spans ...*span) context.Context {
	for _, s := range spans {
		if s != nil {
			return s.ctx
		}
	}
	return d.cmdCtx
}

func (d *decoder) emit(ctx context.Context, typ string, sev log.Severity, t time.Time, details any) {
	d.cfg.Record(ctx, progress.Event{Type: typ, Details: details, Severity: sev, Time: t})
}

// skip counts and logs a line that is not a message.
func (d *decoder) skip(line []byte) {
	d.res.SkippedLines++
	if len(line) == 0 {
		return
	}
	// Redacted whole, then cut: a cut first could split a secret so
	// that the redaction no longer recognises it.
	text := d.scrub.text(string(line))
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	if line[0] == '{' {
		d.cfg.Logger.Warn("terraform: skipped a malformed message", "line", text)
		return
	}
	d.cfg.Logger.Debug("terraform: skipped a line that is not a message", "line", text)
}

func (d *decoder) skipTooLong() {
	d.res.SkippedLines++
	d.cfg.Logger.Warn("terraform: skipped a line longer than the limit", "maxBytes", d.cfg.MaxLineBytes)
}

// levelSeverity is the severity of a message's @level; INFO (0) for the rest.
var levelSeverity = map[string]log.Severity{
	"error": log.SeverityError, "warn": log.SeverityWarn, "debug": log.SeverityDebug, "trace": log.SeverityDebug,
}

// oneLine joins the lines of a tool's text, written for a terminal (prose
// wrapped at 80 columns, a provisioner's output after "Output:"), into one
// for an event, where a line break is escaped or dropped by whatever shows
// it: each line trimmed, blank ones dropped, the rest joined by a space.
func oneLine(s string) string {
	if !strings.Contains(s, "\n") {
		return strings.TrimSpace(s)
	}
	var b strings.Builder
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(l)
		}
	}
	return b.String()
}

// reportedEnd reports whether the stream holds the tool's own report of
// its end (see final), or an error diagnostic, a failed run's last word.
func (d *decoder) reportedEnd() bool {
	return d.final || slices.ContainsFunc(d.res.Diagnostics, func(x Diagnostic) bool {
		return x.Severity == SeverityError
	})
}

// outcome is how an operation ended, beyond what the messages said.
type outcome struct {
	end    time.Time
	exit   procctl.Exit // noExit: no process
	failed bool         // the process failed (a non-zero exit that is not a detailed "changes present")
	cause  error        // cancellation, read error, a stream cut short
	stderr string
}

// noExit is the exit of a process that did not start, or of a stream.
var noExit = procctl.Exit{Code: -1}

// finish ends every span and records common/OperationCompleted or
// OperationFailed. It returns the Result and, for a failed operation, an
// *OperationError.
func (d *decoder) finish(o outcome) (Result, error) {
	d.begin(o.end)
	exitCode := o.exit.ExitCode()
	// A tool that exited 0 without its final message did not report its
	// end: its stream was cut (docs/cli.md).
	if o.cause == nil && !o.failed && d.reports && exitCode >= 0 && d.res.Messages > 0 && !d.reportedEnd() {
		o.cause = ErrIncomplete
	}
	// The interrupt notice is the cause of a run that failed, or of a stream.
	if o.cause == nil && d.interrupted && (o.failed || exitCode < 0) {
		o.cause = ErrInterrupted
	}
	stopped := o.cause != nil && (errors.Is(o.cause, ErrInterrupted) || d.run.Err() != nil)
	// Spans the tool never ended: it failed, was stopped, or was cut off.
	failedAs, status := outcomes.Failed, noEnd
	if stopped {
		failedAs, status = d.stopOutcome(), cancelledStatus
	}
	// They end when the stream ended (a killed tool's: when it died), not
	// at the tool's last message, which may be their start.
	cut := adapter.Later(o.end, d.last)
	for _, open := range []map[string]*span{d.provs, d.ops, d.refresh} {
		for _, s := range open {
			d.end(s, failedAs, status, cut)
		}
	}
	for _, task := range []bool{false, true} { // the provisioner runs first
		for _, s := range d.held {
			if s.task == task {
				d.end(s, s.outcome, "", s.end)
			}
		}
	}

	res := d.res
	res.End, res.ExitCode = o.end, exitCode
	var errDiags []Diagnostic
	for _, diag := range res.Diagnostics {
		if diag.Severity == SeverityError {
			errDiags = append(errDiags, diag)
		}
	}
	res.failed = o.failed || o.cause != nil || res.Errored > 0 || res.Cancelled > 0 || len(errDiags) > 0
	d.op.Span.SetAttributes(
		attribute.Int("terraform.changes.total", res.Total),
		attribute.Int("terraform.changes.completed", res.Completed),
		attribute.Int("terraform.changes.errored", res.Errored),
		attribute.Int("terraform.changes.cancelled", res.Cancelled))
	if exitCode >= 0 {
		d.op.Span.SetAttributes(attribute.Int("terraform.exit_code", exitCode))
	}
	if !res.failed {
		// A plan's progress is what it planned: all of it, once planned.
		if res.Plan != nil && !d.applying && res.Total > 0 {
			d.recordProgress(res.Total, o.end)
		}
		oc := outcomes.OK
		if res.Completed > 0 {
			oc = outcomes.Changed
		}
		d.op.Span.SetAttributes(attribute.String(outcomes.Key, outcomes.Of(oc, d.kids...)))
		d.op.Complete(res.Start, o.end)
		return res, nil
	}

	opErr := &OperationError{
		Operation:          res.Operation,
		ExitCode:           exitCode,
		Diagnostics:        errDiags,
		ErroredResources:   res.ErroredResources,
		CancelledResources: res.CancelledResources,
		Stderr:             o.stderr,
		Err:                o.cause,
	}
	code := progress.FailureInternal
	if res.Errored > 0 && o.cause == nil {
		code = progress.FailureInfrastructure
	}
	extra := map[string]any{}
	if len(errDiags) > 0 {
		extra["diagnostics"] = errDiags
	}
	if len(res.ErroredResources) > 0 {
		extra["erroredResources"] = res.ErroredResources
	}
	if len(res.CancelledResources) > 0 {
		extra["cancelledResources"] = res.CancelledResources
	}
	// cicd.pipeline.result (docs/conventions.md): an error when the tool
	// never ran or its output could not be read, the machinery's failure.
	result := cicdconv.PipelineResultFailure
	switch {
	case stopped && failedAs == outcomes.TimedOut:
		result = cicdconv.PipelineResultTimeout
	case stopped:
		result = cicdconv.PipelineResultCancellation
	case o.cause != nil && exitCode < 0:
		result = cicdconv.PipelineResultError
	}
	how := outcomes.Of(failedAs, d.kids...)
	if how == outcomes.Failed && stopped {
		// An operation failed before the stop: the run's failure counts.
		result = cicdconv.PipelineResultFailure
	}
	d.op.Span.SetAttributes(attribute.String(outcomes.Key, how))
	d.op.FailAs(result, res.Start, o.end, code, d.describeFailure(opErr), extra)
	return res, opErr
}

// describeFailure is the user-safe description of common/OperationFailed:
// what stopped the operation, and the error diagnostics' summaries.
func (d *decoder) describeFailure(e *OperationError) string {
	var why string
	switch {
	case errors.Is(e.Err, context.Canceled) || errors.Is(e.Err, context.DeadlineExceeded):
		why = "cancelled"
	case e.Err != nil:
		why = strings.TrimPrefix(e.Err.Error(), "terraform: ")
	case len(e.ErroredResources) > 0:
		why = fmt.Sprintf("%d resource operation(s) errored", len(e.ErroredResources))
	case e.ExitCode > 0:
		why = fmt.Sprintf("exit status %d", e.ExitCode)
	default:
		why = "error diagnostics"
	}
	return why + e.reported()
}
