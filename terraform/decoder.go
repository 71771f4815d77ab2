package terraform

import (
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
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

// suppressedOutput is what the tool prints instead of a provisioner's
// output when the provisioner's configuration holds a sensitive value.
const suppressedOutput = "(output suppressed due to sensitive value in config)"

// withheldDetail replaces the detail of a diagnostic about a resource whose
// provisioner configuration holds a sensitive value: the tool quotes the
// provisioner's command and output there unredacted.
const withheldDetail = "(detail withheld: the resource's provisioner configuration holds a sensitive value)"

// noEnd is the status of a span whose end the tool never reported.
const noEnd = "the tool reported no end"

// cancelledStatus is the status of a span that a stop cut short: the run
// was cancelled, or the tool reported an interrupt.
const cancelledStatus = "cancelled"

// interruptNotice begins the log message that OpenTofu and Terraform write
// when they receive SIGINT ("Interrupt received.\nPlease wait for ... to
// exit"): from then on, what errors was stopped, not broken.
const interruptNotice = "Interrupt received"

// decoder turns machine-readable UI messages, one line at a time, into
// progress events and spans, live: each event is recorded while its line is
// handled. It is used by one goroutine.
type decoder struct {
	cfg   *config
	scrub *scrubber
	run   context.Context // the caller's context: cancelled when the run is stopped
	base  context.Context // the caller's context, never cancelled
	msg   message         // reused between lines

	// mu serialises the handling of lines and the heartbeat (see
	// heartbeat.go), the only other goroutine that reads the state.
	mu sync.Mutex

	operation string
	spanName  string
	spanAttrs []attribute.KeyValue
	started   bool
	op        *adapter.Operation // the command span, once begun
	cmdCtx    context.Context    // the context of the events: op.Ctx, or the init span's during init
	last      time.Time          // the tool's last timestamp

	ops         map[string]*span // open apply operations, by address
	refresh     map[string]*span // open refreshes, by address
	provs       map[string]*span // open provisioner runs, by address and provisioner
	failed      []*span          // errored operations: ended at finish, with their diagnostics
	failedProvs []*span          // errored provisioner runs: ended at finish, when their outcome is sure

	total       int  // resource operations the plan announced
	haveTotal   bool // a plan's change_summary was seen
	applying    bool // an apply_start was seen: the stream is an apply's or a destroy's
	final       bool // the tool's final message came after the last start (see reportedEnd)
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
	end          time.Time // when it errored
	outcome      string    // how it errored: outcomes.Failed or outcomes.Cancelled
	counted      bool      // its error was counted in Result.Errored
	diagnosed    bool      // an error diagnostic set its status
	heard        time.Time // the wall clock when a message about it was last read (the heartbeat's)
	opened       time.Time // the wall clock when its start was read
	task         bool      // a task's span (startTask): a resource operation or refresh
}

func newDecoder(ctx context.Context, cfg *config, operation, spanName string, attrs ...attribute.KeyValue) *decoder {
	return &decoder{
		cfg:       cfg,
		scrub:     newScrubber(cfg.Redactor, cfg.sensitive),
		run:       ctx,
		base:      context.WithoutCancel(ctx),
		operation: operation,
		spanName:  spanName,
		spanAttrs: attrs,
		ops:       map[string]*span{},
		refresh:   map[string]*span{},
		provs:     map[string]*span{},
		sensitive: map[string]bool{},
		diags:     map[diagKey]int{},
		total:     progress.UnknownTotal,
		res:       Result{Operation: operation, ExitCode: -1},
	}
}

// begin starts the command span and records common/OperationStarted, once.
func (d *decoder) begin(t time.Time) {
	if d.started {
		return
	}
	d.started = true
	d.res.Start = t
	d.startCommandSpan(t)
}

// startCommandSpan starts the command span, the parent of every other
// (the run's span of the CI/CD conventions: "RUN <command>"), and records
// common/OperationStarted in it; endCommandSpan ends it.
func (d *decoder) startCommandSpan(t time.Time) {
	d.op = d.cfg.StartRun(d.base, adapter.Run{Operation: d.operation, Pipeline: d.operation, OldSpan: d.spanName,
		Old: []attribute.KeyValue{attribute.String("terraform.operation", d.operation)}}, t, d.spanAttrs...)
	d.cmdCtx = d.op.Ctx
}

// endCommandSpan ends the command span at end with its outcome, and
// records common/OperationCompleted, or common/OperationFailed with the
// failure code, description and extra details when failureCode is set;
// result is then the run's cicd.pipeline.result (runResult).
func (d *decoder) endCommandSpan(start, end time.Time, oc string, result cicdconv.PipelineResultAttr, failureCode, description string, extra map[string]any) {
	d.op.Span.SetAttributes(attribute.String(outcomes.Key, oc))
	if failureCode == "" {
		d.op.Complete(start, end)
		return
	}
	d.op.FailAs(result, start, end, failureCode, description, extra)
}

// handle decodes one line and records what it means.
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

	switch m.Type {
	case "version":
		d.version(m, t)
	case "log", "":
		if strings.HasPrefix(strings.TrimSpace(m.Message), interruptNotice) {
			d.interrupt(t)
		}
		d.emit(d.cmdCtx, TypeLog, levelSeverity(m.Level), t,
			logDetails{Level: m.Level, Message: oneLine(d.scrub.value(m.Message))})
	case "diagnostic":
		if m.Diag == nil {
			d.generic(m, t)
			return
		}
		d.diagnostic(*m.Diag, t)
	case "planned_change", "resource_drift":
		if m.Change == nil {
			d.generic(m, t)
			return
		}
		d.final = false
		typ := TypePlannedChange
		if m.Type == "resource_drift" {
			typ = TypeResourceDrift
		}
		c := m.Change
		det := changeDetails{resourceFields: c.Resource.fields(), Action: c.Action, Reason: c.Reason}
		if c.PreviousResource != nil {
			det.PreviousAddress = c.PreviousResource.Addr
		}
		if c.Importing != nil {
			det.ImportingID = c.Importing.ID
		}
		d.emit(d.cmdCtx, typ, 0, t, det)
	case "change_summary":
		if m.Changes == nil {
			d.generic(m, t)
			return
		}
		d.changeSummary(*m.Changes, t)
	case "outputs":
		d.outputs(m.Outputs, t)
	case "apply_start", "apply_progress", "apply_complete", "apply_errored",
		"provision_start", "provision_progress", "provision_complete", "provision_errored",
		"refresh_start", "refresh_complete":
		if m.Hook == nil {
			d.generic(m, t)
			return
		}
		d.hook(m.Type, m.Hook, t)
	default:
		if (m.Type == "output" || m.Type == "init_output") && initialized(m.Message) {
			d.final = true // an init's last word
		}
		d.generic(m, t)
	}
}

// initialized reports whether a message of an init is the tool's report
// of its success: "OpenTofu has been successfully initialized!",
// "Terraform has been successfully initialized!", or "OpenTofu initialized
// in an empty directory!".
func initialized(msg string) bool {
	msg = strings.TrimSpace(msg)
	return strings.HasSuffix(msg, " successfully initialized!") || strings.HasSuffix(msg, " initialized in an empty directory!")
}

func (d *decoder) version(m *message, t time.Time) {
	det := versionDetails{UI: m.UI}
	switch {
	case m.Tofu != "":
		det.Tool, det.Version = "tofu", m.Tofu
	case m.Terraform != "":
		det.Tool, det.Version = "terraform", m.Terraform
	}
	if det.Tool != "" {
		d.res.Tool, d.res.Version = det.Tool, det.Version
		d.op.Span.SetAttributes(attribute.String("terraform.tool", det.Tool), attribute.String("terraform.version", det.Version))
	}
	d.emit(d.cmdCtx, TypeVersion, 0, t, det)
}

// diagnostic records a diagnostic once: the tool repeats some word for
// word (a halted apply writes "execution halted" once per stopped
// operation), and a repeat is only counted, in Diagnostic.Repeated.
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

	ctx := d.cmdCtx
	sev := log.SeverityWarn
	if diag.Severity == SeverityError {
		sev = log.SeverityError
	}
	// The span of the operation a diagnostic is about (errored, or never
	// ended: a data source that could not be read) takes it: the status
	// says why, the event holds the detail.
	if op := d.diagnosed(diag.Address); op != nil {
		ctx = op.ctx
		if diag.Severity == SeverityError {
			op.span.SetStatus(codes.Error, firstLine(diag.Summary))
			op.diagnosed = true
		}
		op.span.AddEvent("terraform.diagnostic", trace.WithTimestamp(t), trace.WithAttributes(
			attribute.String("terraform.diagnostic.severity", diag.Severity),
			attribute.String("terraform.diagnostic.summary", diag.Summary),
			attribute.String("terraform.diagnostic.detail", diag.Detail)))
	}
	d.emit(ctx, TypeDiagnostic, sev, t, diag)
}

// diagnosed returns the span a diagnostic about addr belongs to: an
// errored operation's, else an open one's.
func (d *decoder) diagnosed(addr string) *span {
	if addr == "" {
		return nil
	}
	for _, f := range d.failed {
		if f.addr == addr {
			return f
		}
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
	d.total = max(cs.Add+cs.Change+cs.Remove, 0)
	d.haveTotal = true
	if d.total > 0 {
		d.progress(t)
	}
}

// outputs records the root module's outputs, each with the same shape:
// {name, sensitive, action, value}. They are a list, not a map by name,
// so that an output whose name looks secret ("password_out") keeps its
// shape: the Recorder would replace a map entry under such a key whole.
// Its value is redacted here instead.
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

// interruptWindow is how long before the tool's interrupt notice an error
// is taken for the interrupt's doing. Ctrl-C in a terminal sends SIGINT to
// the tool and to its provisioner commands at once: a command may die, and
// the tool report its operation errored, a moment before the tool writes
// its notice.
const interruptWindow = time.Second

// interrupt records the tool's interrupt notice at t: from now on what
// errors is cancelled, and so is what errored within interruptWindow
// before. Their events were recorded already, at ERROR; their spans, the
// Result and common/OperationFailed count them as cancelled.
func (d *decoder) interrupt(t time.Time) {
	d.interrupted = true
	for _, f := range append(slices.Clone(d.failedProvs), d.failed...) {
		if f.outcome != outcomes.Failed || t.Sub(f.end) > interruptWindow {
			continue
		}
		f.outcome = d.stopOutcome()
		f.span.SetStatus(codes.Error, cancelledStatus)
		if f.action == "" { // a provisioner run
			continue
		}
		if i := slices.Index(d.res.ErroredResources, f.addr); i >= 0 {
			d.res.ErroredResources = slices.Delete(d.res.ErroredResources, i, i+1)
		}
		d.res.CancelledResources = append(d.res.CancelledResources, f.addr)
		if f.counted {
			f.counted = false
			d.res.Errored--
			d.res.Cancelled++
		}
	}
}

// stopping reports whether what errors now was stopped rather than broken:
// the run's context is done, or the tool reported an interrupt.
func (d *decoder) stopping() bool {
	return d.interrupted || d.run.Err() != nil
}

// stopOutcome is the outcome of what a stop cut short, and of what errors
// while the run stops.
func (d *decoder) stopOutcome() string {
	if errors.Is(d.run.Err(), context.DeadlineExceeded) {
		return outcomes.TimedOut
	}
	return outcomes.Cancelled
}

func (d *decoder) hook(typ string, h *hookMsg, t time.Time) {
	addr := h.Resource.Addr
	rf := h.Resource.fields()
	idValue := h.IDValue
	now := time.Now()
	if op := d.ops[addr]; op != nil {
		op.heard = now
	}
	switch typ {
	case "apply_start":
		d.applying, d.final = true, false
		if prev := d.ops[addr]; prev != nil {
			// The tool reports one operation per address at a time; a
			// second start means the end of the first was never written.
			d.endResourceSpan(prev, outcomes.Failed, noEnd, t)
		}
		op := d.startResourceSpan(addr, h.Action, rf, t)
		d.emit(op.ctx, TypeApplyStarted, 0, t,
			applyStartedDetails{resourceFields: rf, Action: h.Action, IDKey: h.IDKey, IDValue: idValue})
	case "apply_progress":
		d.emit(d.ctxOf(d.ops[addr]), TypeApplyProgress, 0, t,
			applyProgressDetails{resourceFields: rf, Action: h.Action, ElapsedSeconds: h.Elapsed})
	case "apply_complete":
		op := d.ops[addr]
		d.emit(d.ctxOf(op), TypeApplyCompleted, 0, t, applyCompletedDetails{
			resourceFields: rf, Action: h.Action, IDKey: h.IDKey, IDValue: idValue, ElapsedSeconds: h.Elapsed})
		if op != nil {
			if h.IDKey != "" {
				op.span.SetAttributes(attribute.String("terraform.resource.id", idValue))
			}
			oc := outcomes.OK
			if counted(h.Action) {
				oc = outcomes.Changed
			}
			d.endResourceSpan(op, oc, "", t)
		}
		if counted(h.Action) {
			d.res.Completed++
			d.progress(t)
		}
	case "apply_errored":
		op := d.ops[addr]
		stopped := d.stopping()
		det := applyErroredDetails{resourceFields: rf, Action: h.Action, ElapsedSeconds: h.Elapsed}
		sev := log.SeverityError
		if stopped {
			// Stopped, not broken: a warning, and counted apart.
			det.Cancelled, sev = true, log.SeverityWarn
		}
		d.emit(d.ctxOf(op), TypeApplyErrored, sev, t, det)
		if op != nil {
			op.outcome, op.counted = outcomes.Failed, !stopped && counted(h.Action)
			op.span.SetStatus(codes.Error, h.Action+" errored")
			if stopped {
				op.outcome = d.stopOutcome()
				op.span.SetStatus(codes.Error, cancelledStatus)
			}
			// Ended when the run ends: the diagnostics that say why come
			// last.
			op.end = t
			d.failed = append(d.failed, op)
			delete(d.ops, addr)
		}
		if stopped {
			d.res.CancelledResources = append(d.res.CancelledResources, addr)
			if counted(h.Action) {
				d.res.Cancelled++
			}
		} else {
			d.res.ErroredResources = append(d.res.ErroredResources, addr)
			if counted(h.Action) {
				d.res.Errored++
			}
		}
	case "provision_start":
		d.final = false
		key := addr + "\x00" + h.Provisioner
		if prev := d.provs[key]; prev != nil {
			d.endProvisionSpan(key, prev, outcomes.Failed, noEnd, t)
		}
		p := d.startProvisionSpan(key, addr, h.Provisioner, t)
		d.emit(p.ctx, TypeProvisionStarted, 0, t, provisionDetails{resourceFields: rf, Provisioner: h.Provisioner})
	case "provision_progress":
		key := addr + "\x00" + h.Provisioner
		if h.Output == suppressedOutput {
			d.sensitive[addr] = true
		}
		ctx := d.ctxOf(d.provs[key])
		if d.provs[key] == nil {
			ctx = d.ctxOf(d.ops[addr])
		}
		d.emit(ctx, TypeProvisionOutput, 0, t, provisionOutputDetails{
			resourceFields: rf, Provisioner: h.Provisioner, Output: d.scrub.line(key, h.Output)})
	case "provision_complete", "provision_errored":
		key := addr + "\x00" + h.Provisioner
		p := d.provs[key]
		ctx := d.ctxOf(p)
		if p == nil {
			ctx = d.ctxOf(d.ops[addr])
		}
		det := provisionDetails{resourceFields: rf, Provisioner: h.Provisioner}
		evtType, sev, oc, status := TypeProvisionCompleted, log.Severity(0), outcomes.OK, ""
		if typ == "provision_errored" {
			evtType, sev, oc, status = TypeProvisionErrored, log.SeverityError, outcomes.Failed, h.Provisioner+" errored"
			if d.stopping() {
				det.Cancelled, sev, oc, status = true, log.SeverityWarn, d.stopOutcome(), cancelledStatus
			}
		}
		d.emit(ctx, evtType, sev, t, det)
		switch {
		case p == nil:
		case oc == outcomes.Failed:
			// Ended when the run ends: an interrupt notice that follows at
			// once may still make it cancelled (see interrupt).
			delete(d.provs, key)
			p.outcome, p.end = oc, t
			p.span.SetStatus(codes.Error, status)
			d.failedProvs = append(d.failedProvs, p)
		default:
			d.endProvisionSpan(key, p, oc, status, t)
		}
		d.scrub.endStream(key)
	case "refresh_start":
		d.final = false
		if prev := d.refresh[addr]; prev != nil {
			d.endRefreshSpan(prev, outcomes.OK, "", t)
		}
		r := d.startRefreshSpan(addr, rf, t)
		d.emit(r.ctx, TypeRefreshStarted, 0, t, refreshDetails{resourceFields: rf, IDKey: h.IDKey, IDValue: idValue})
	case "refresh_complete":
		r := d.refresh[addr]
		d.emit(d.ctxOf(r), TypeRefreshCompleted, 0, t, refreshDetails{resourceFields: rf, IDKey: h.IDKey, IDValue: idValue})
		if r != nil {
			d.endRefreshSpan(r, outcomes.OK, "", t)
		}
	}
}

// startResourceSpan starts the span of a resource operation, "<action>
// <address>", a task of the run under the command span (startTask);
// endResourceSpan ends it.
func (d *decoder) startResourceSpan(addr, action string, rf resourceFields, t time.Time) *span {
	op := d.startTask(addr, action, rf, t)
	op.addr, op.action, op.rf = addr, action, rf
	d.ops[addr] = op
	return op
}

// endResourceSpan ends a resource operation's span at t with its outcome;
// status, when set, is the description of an Error status (unless an
// error diagnostic has already said why).
func (d *decoder) endResourceSpan(op *span, oc, status string, t time.Time) {
	if d.ops[op.addr] == op {
		delete(d.ops, op.addr)
	}
	d.endSpan(op, oc, status, t)
}

// startProvisionSpan starts the span of a provisioner run, "provision
// <provisioner>", under its resource operation's span; endProvisionSpan
// ends it.
func (d *decoder) startProvisionSpan(key, addr, provisioner string, t time.Time) *span {
	p := d.startSpan(d.ctxOf(d.ops[addr]), "provision "+provisioner, t,
		attribute.String("terraform.resource.address", addr),
		attribute.String("terraform.provisioner", provisioner))
	p.addr = addr
	d.provs[key] = p
	return p
}

// endProvisionSpan ends a provisioner run's span; key is its key in
// d.provs, or "" when it is no longer there.
func (d *decoder) endProvisionSpan(key string, p *span, oc, status string, t time.Time) {
	if d.provs[key] == p {
		delete(d.provs, key)
	}
	d.endSpan(p, oc, status, t)
}

// startRefreshSpan starts the span of a refresh, "refresh <address>", a
// task of the run under the command span (startTask); endRefreshSpan ends
// it.
func (d *decoder) startRefreshSpan(addr string, rf resourceFields, t time.Time) *span {
	r := d.startTask(addr, "refresh", rf, t)
	r.addr = addr
	d.refresh[addr] = r
	return r
}

// endRefreshSpan ends a refresh's span.
func (d *decoder) endRefreshSpan(r *span, oc, status string, t time.Time) {
	if d.refresh[r.addr] == r {
		delete(d.refresh, r.addr)
	}
	d.endSpan(r, oc, status, t)
}

// endSpan is what the end functions of the three span kinds share: the
// outcome, an Error status with its description (unless a diagnostic has
// set one), and the end at t; a task's span (a resource operation, a
// refresh) ends through the kit's EndTask, which maps the outcome to the
// task's result.
func (d *decoder) endSpan(s *span, oc, status string, t time.Time) {
	if s.diagnosed {
		status = ""
	}
	s.span.SetAttributes(attribute.String(outcomes.Key, oc))
	if s.task {
		d.op.EndTask(s.span, t, oc, status)
		return
	}
	if status != "" {
		s.span.SetStatus(codes.Error, status)
	}
	s.span.End(trace.WithTimestamp(t))
}

// counted reports whether an operation's end counts toward the plan's
// total: creates, updates and deletes do; reads of data sources, which the
// change_summary leaves out, do not.
func counted(action string) bool {
	switch action {
	case "create", "update", "delete", "replace":
		return true
	}
	return false
}

// progress records common/Progress: the operations that completed of the
// plan's total. The total is raised when more operations complete than
// were announced, so that N never exceeds M; without a plan summary (a
// saved plan applied) it is unknown, and the event has none.
func (d *decoder) progress(t time.Time) {
	done := d.res.Completed
	if d.haveTotal && done > d.total {
		d.total = done
	}
	evt := progress.Progress(int64(done), int64(d.total), ProgressUnit)
	evt.Time = t
	d.record(d.cmdCtx, evt)
}

func (d *decoder) generic(m *message, t time.Time) {
	det := genericDetails{Type: m.Type, Level: m.Level, Message: oneLine(d.scrub.value(m.Message))}
	if m.Hook != nil {
		det.Address, det.Action = m.Hook.Resource.Addr, m.Hook.Action
	}
	typ := EventType(m.Type)
	if _, known := knownTypes[m.Type]; known {
		typ = TypeMessage // a known type without its object: keep each type's shape
	}
	if typ != TypeMessage {
		det.Type = ""
	}
	d.emit(d.cmdCtx, typ, levelSeverity(m.Level), t, det)
}

func (d *decoder) startSpan(parent context.Context, name string, t time.Time, attrs ...attribute.KeyValue) *span {
	ctx, s := d.cfg.Tracer.Start(parent, name, trace.WithTimestamp(t), trace.WithAttributes(attrs...))
	now := time.Now()
	return &span{ctx: ctx, span: s, heard: now, opened: now}
}

func (d *decoder) ctxOf(s *span) context.Context {
	if s == nil {
		return d.cmdCtx
	}
	return s.ctx
}

func (d *decoder) emit(ctx context.Context, typ string, sev log.Severity, t time.Time, details any) {
	d.record(ctx, progress.Event{Type: typ, Details: details, Severity: sev, Time: t})
}

func (d *decoder) record(ctx context.Context, evt progress.Event) {
	d.cfg.Record(ctx, evt)
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

// skipTooLong counts and logs a line longer than the limit.
func (d *decoder) skipTooLong() {
	d.res.SkippedLines++
	d.cfg.Logger.Warn("terraform: skipped a line longer than the limit", "maxBytes", d.cfg.MaxLineBytes)
}

func levelSeverity(level string) log.Severity {
	switch level {
	case "error":
		return log.SeverityError
	case "warn":
		return log.SeverityWarn
	case "debug", "trace":
		return log.SeverityDebug
	}
	return 0
}

// oneLine joins the lines of a tool's text into one, for an event: the
// tool writes its messages for a terminal ("\nInterrupt
// received.\nPlease wait ...", prose wrapped at 80 columns, a
// provisioner's output after "Output:"), and a line break inside a value
// is escaped, or dropped, by whatever shows it. Each line is trimmed,
// blank ones go, and the rest are joined by one space.
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
// its end: after the last start of anything (a planned change, a
// refresh, a resource operation, a provisioner), a change summary (a
// plan's, an apply's or a destroy's), the outputs (a refresh's last
// message) or an init's success; or an error diagnostic, the last word of
// a failed run.
func (d *decoder) reportedEnd() bool {
	if d.final {
		return true
	}
	for _, diag := range d.res.Diagnostics {
		if diag.Severity == SeverityError {
			return true
		}
	}
	return false
}

// outcome is how an operation ended, beyond what the messages said.
type outcome struct {
	end      time.Time
	exitCode int   // -1: no process
	failed   bool  // the process failed (a non-zero exit that is not a detailed "changes present")
	cause    error // cancellation, read error, a stream cut short
	stderr   string
}

// finish ends every span and records common/OperationCompleted or
// OperationFailed. It returns the Result and, for a failed operation, an
// *OperationError.
func (d *decoder) finish(o outcome) (Result, error) {
	d.begin(o.end)
	end := o.end
	// The tool's interrupt notice is the cause of a run that failed (Run:
	// the exit status says whether it did) or of a stream.
	if o.cause == nil && d.interrupted && (o.failed || o.exitCode < 0) {
		o.cause = ErrInterrupted
	}
	stopped := o.cause != nil && (errors.Is(o.cause, ErrInterrupted) || d.run.Err() != nil)
	// Spans the tool never ended: it failed, was stopped, or the stream
	// was cut.
	openOutcome, openStatus := outcomes.Failed, noEnd
	if stopped {
		openOutcome, openStatus = d.stopOutcome(), cancelledStatus
	}
	for key, s := range d.provs {
		d.endProvisionSpan(key, s, openOutcome, openStatus, d.last)
	}
	for _, s := range d.ops {
		d.endResourceSpan(s, openOutcome, openStatus, d.last)
	}
	for _, s := range d.refresh {
		d.endRefreshSpan(s, openOutcome, openStatus, d.last)
	}
	for _, p := range d.failedProvs {
		d.endProvisionSpan("", p, p.outcome, "", p.end)
	}
	for _, f := range d.failed {
		d.endResourceSpan(f, f.outcome, "", f.end)
	}
	d.failed, d.failedProvs = nil, nil

	res := d.res
	res.End = end
	res.ExitCode = o.exitCode
	res.Total = d.total

	var errDiags []Diagnostic
	for _, diag := range res.Diagnostics {
		if diag.Severity == SeverityError {
			errDiags = append(errDiags, diag)
		}
	}
	failed := o.failed || o.cause != nil || res.Errored > 0 || res.Cancelled > 0 || len(errDiags) > 0
	res.failed = failed
	d.op.Span.SetAttributes(
		attribute.Int("terraform.changes.total", res.Total),
		attribute.Int("terraform.changes.completed", res.Completed),
		attribute.Int("terraform.changes.errored", res.Errored),
		attribute.Int("terraform.changes.cancelled", res.Cancelled))
	if o.exitCode >= 0 {
		d.op.Span.SetAttributes(attribute.Int("terraform.exit_code", o.exitCode))
	}
	if !failed {
		// A plan's progress is what it planned: all of it, once planned.
		if d.res.Plan != nil && !d.applying && d.total > 0 {
			evt := progress.Progress(int64(d.total), int64(d.total), ProgressUnit)
			evt.Time = end
			d.record(d.cmdCtx, evt)
		}
		oc := outcomes.OK
		if res.Completed > 0 {
			oc = outcomes.Changed
		}
		d.endCommandSpan(res.Start, end, oc, cicdconv.PipelineResultSuccess, "", "", nil)
		return res, nil
	}

	opErr := &OperationError{
		Operation:          d.operation,
		ExitCode:           o.exitCode,
		Diagnostics:        errDiags,
		ErroredResources:   res.ErroredResources,
		CancelledResources: res.CancelledResources,
		Stderr:             o.stderr,
		Err:                o.cause,
	}
	code := FailureInternal
	if res.Errored > 0 && o.cause == nil {
		code = FailureInfrastructure
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
	oc := outcomes.Failed
	if stopped {
		oc = d.stopOutcome()
	}
	d.endCommandSpan(res.Start, end, oc, d.runResult(o, stopped), code, d.describeFailure(opErr), extra)
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
	if len(e.Diagnostics) > 0 {
		return why + ": " + describeDiagnostics(e.Diagnostics)
	}
	if reason := stderrReason(e.Stderr); reason != "" && e.Err == nil {
		return why + ": " + reason
	}
	return why
}
