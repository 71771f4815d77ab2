package terraform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/kit/adapter"
	"github.com/progressotel/progressotel/progress"
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

// decoder turns machine-readable UI messages, one line at a time, into
// progress events and spans, live: each event is recorded while its line is
// handled. It is used by one goroutine.
type decoder struct {
	cfg   *config
	scrub *scrubber
	base  context.Context // the caller's context, never cancelled
	msg   message         // reused between lines

	operation string
	spanName  string
	spanAttrs []attribute.KeyValue
	started   bool
	op        *adapter.Operation // the command span, once begun
	cmdCtx    context.Context    // the context of the events: op.Ctx, or the init span's during init
	last      time.Time          // the tool's last timestamp

	ops     map[string]*span // open apply operations, by address
	refresh map[string]*span // open refreshes, by address
	provs   map[string]*span // open provisioner runs, by address and provisioner
	failed  []*span          // errored operations: ended at finish, with their diagnostics

	total     int  // resource operations the plan announced
	haveTotal bool // a plan's change_summary was seen
	sensitive map[string]bool

	res Result
}

// span is an open span of a resource operation or provisioner run.
type span struct {
	addr, action string
	ctx          context.Context
	span         trace.Span
	end          time.Time // when it errored
	diagnosed    bool      // an error diagnostic set its status
}

func newDecoder(ctx context.Context, cfg *config, operation, spanName string, attrs ...attribute.KeyValue) *decoder {
	return &decoder{
		cfg:       cfg,
		scrub:     newScrubber(cfg.Redactor, cfg.sensitive),
		base:      context.WithoutCancel(ctx),
		operation: operation,
		spanName:  spanName,
		spanAttrs: attrs,
		ops:       map[string]*span{},
		refresh:   map[string]*span{},
		provs:     map[string]*span{},
		sensitive: map[string]bool{},
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
	attrs := append([]attribute.KeyValue{attribute.String("terraform.operation", d.operation)}, d.spanAttrs...)
	d.op = d.cfg.StartOperation(d.base, d.operation, d.spanName, t, attrs...)
	d.cmdCtx = d.op.Ctx
}

// handle decodes one line and records what it means.
func (d *decoder) handle(line []byte) {
	m := &d.msg
	if !m.parse(line) {
		d.skip(line)
		return
	}
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
		d.emit(d.cmdCtx, TypeLog, levelSeverity(m.Level), t,
			logDetails{Level: m.Level, Message: d.scrub.value(m.Message)})
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
		d.generic(m, t)
	}
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

func (d *decoder) diagnostic(diag Diagnostic, t time.Time) {
	diag.Summary = d.scrub.text(diag.Summary)
	diag.Detail = d.scrub.text(diag.Detail)
	if diag.Address != "" && d.sensitive[diag.Address] && diag.Detail != "" {
		diag.Detail = withheldDetail
	}
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

func (d *decoder) outputs(raw json.RawMessage, t time.Time) {
	var outs map[string]outputMsg
	if err := json.Unmarshal(raw, &outs); err != nil {
		d.generic(&d.msg, t)
		return
	}
	det := outputsDetails{Outputs: make(map[string]outputDetails, len(outs))}
	res := make(map[string]Output, len(outs))
	for name, o := range outs {
		od := outputDetails{Sensitive: o.Sensitive, Action: o.Action}
		// A sensitive output's value is never read, even when a stream
		// carries one: the tool itself never writes it.
		if !o.Sensitive && len(o.Value) > 0 {
			var v any
			if json.Unmarshal(o.Value, &v) == nil {
				od.Value = d.scrubValue(v)
			}
		}
		det.Outputs[name] = od
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

func (d *decoder) hook(typ string, h *hookMsg, t time.Time) {
	addr := h.Resource.Addr
	rf := h.Resource.fields()
	idValue := h.IDValue
	switch typ {
	case "apply_start":
		if prev := d.ops[addr]; prev != nil {
			// The tool reports one operation per address at a time; a
			// second start means the end of the first was never written.
			prev.span.SetStatus(codes.Error, noEnd)
			prev.span.End(trace.WithTimestamp(t))
		}
		op := d.startSpan(d.cmdCtx, h.Action+" "+addr, t,
			attribute.String("terraform.resource.address", addr),
			attribute.String("terraform.resource.type", rf.ResourceType),
			attribute.String("terraform.action", h.Action))
		op.addr, op.action = addr, h.Action
		d.ops[addr] = op
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
			op.span.End(trace.WithTimestamp(t))
			delete(d.ops, addr)
		}
		if counted(h.Action) {
			d.res.Completed++
			d.progress(t)
		}
	case "apply_errored":
		op := d.ops[addr]
		d.emit(d.ctxOf(op), TypeApplyErrored, log.SeverityError, t,
			applyProgressDetails{resourceFields: rf, Action: h.Action, ElapsedSeconds: h.Elapsed})
		if op != nil {
			op.span.SetStatus(codes.Error, h.Action+" errored")
			op.end = t
			d.failed = append(d.failed, op)
			delete(d.ops, addr)
		}
		d.res.ErroredResources = append(d.res.ErroredResources, addr)
		if counted(h.Action) {
			d.res.Errored++
			d.progress(t)
		}
	case "provision_start":
		key := addr + "\x00" + h.Provisioner
		if prev := d.provs[key]; prev != nil {
			prev.span.SetStatus(codes.Error, noEnd)
			prev.span.End(trace.WithTimestamp(t))
		}
		p := d.startSpan(d.ctxOf(d.ops[addr]), "provision "+h.Provisioner, t,
			attribute.String("terraform.resource.address", addr),
			attribute.String("terraform.provisioner", h.Provisioner))
		p.addr = addr
		d.provs[key] = p
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
		evtType, sev := TypeProvisionCompleted, log.Severity(0)
		if typ == "provision_errored" {
			evtType, sev = TypeProvisionErrored, log.SeverityError
		}
		d.emit(ctx, evtType, sev, t, provisionDetails{resourceFields: rf, Provisioner: h.Provisioner})
		if p != nil {
			if typ == "provision_errored" {
				p.span.SetStatus(codes.Error, h.Provisioner+" errored")
			}
			p.span.End(trace.WithTimestamp(t))
			delete(d.provs, key)
		}
		d.scrub.endStream(key)
	case "refresh_start":
		if prev := d.refresh[addr]; prev != nil {
			prev.span.End(trace.WithTimestamp(t))
		}
		r := d.startSpan(d.cmdCtx, "refresh "+addr, t,
			attribute.String("terraform.resource.address", addr),
			attribute.String("terraform.resource.type", rf.ResourceType),
			attribute.String("terraform.action", "refresh"))
		d.refresh[addr] = r
		d.emit(r.ctx, TypeRefreshStarted, 0, t, refreshDetails{resourceFields: rf, IDKey: h.IDKey, IDValue: idValue})
	case "refresh_complete":
		r := d.refresh[addr]
		d.emit(d.ctxOf(r), TypeRefreshCompleted, 0, t, refreshDetails{resourceFields: rf, IDKey: h.IDKey, IDValue: idValue})
		if r != nil {
			r.span.End(trace.WithTimestamp(t))
			delete(d.refresh, addr)
		}
	}
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

// progress records common/Progress: the operations that ended of the
// plan's total. The total is raised when more operations end than were
// announced, so that N never exceeds M; it is 0 (unknown) without a plan.
func (d *decoder) progress(t time.Time) {
	done := d.res.Completed + d.res.Errored
	if d.haveTotal && done > d.total {
		d.total = done
	}
	evt := progress.Progress(int64(done), int64(d.total), ProgressUnit)
	evt.Time = t
	d.record(d.cmdCtx, evt)
}

func (d *decoder) generic(m *message, t time.Time) {
	det := genericDetails{Type: m.Type, Level: m.Level, Message: d.scrub.value(m.Message)}
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
	return &span{ctx: ctx, span: s}
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

// outcome is how an operation ended, beyond what the messages said.
type outcome struct {
	end      time.Time
	exitCode int   // -1: no process
	failed   bool  // the process failed (a non-zero exit that is not a detailed "changes present")
	cause    error // cancellation, read error
	stderr   string
}

// finish ends every span and records common/OperationCompleted or
// OperationFailed. It returns the Result and, for a failed operation, an
// *OperationError.
func (d *decoder) finish(o outcome) (Result, error) {
	d.begin(o.end)
	end := o.end
	// Spans the tool never ended: it failed or was stopped on the way.
	for _, open := range []map[string]*span{d.provs, d.ops, d.refresh} {
		for key, s := range open {
			if !s.diagnosed {
				s.span.SetStatus(codes.Error, noEnd)
			}
			s.span.End(trace.WithTimestamp(d.last))
			delete(open, key)
		}
	}
	for _, f := range d.failed {
		f.span.End(trace.WithTimestamp(f.end))
	}
	d.failed = nil

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
	failed := o.failed || o.cause != nil || res.Errored > 0 || len(errDiags) > 0
	res.failed = failed
	d.op.Span.SetAttributes(
		attribute.Int("terraform.changes.total", res.Total),
		attribute.Int("terraform.changes.completed", res.Completed),
		attribute.Int("terraform.changes.errored", res.Errored))
	if o.exitCode >= 0 {
		d.op.Span.SetAttributes(attribute.Int("terraform.exit_code", o.exitCode))
	}
	if !failed {
		d.op.Complete(res.Start, end)
		if res.Messages == 0 {
			return res, ErrNoMessages
		}
		return res, nil
	}

	opErr := &OperationError{
		Operation:        d.operation,
		ExitCode:         o.exitCode,
		Diagnostics:      errDiags,
		ErroredResources: res.ErroredResources,
		Stderr:           o.stderr,
		Err:              o.cause,
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
	d.op.Fail(res.Start, end, code, d.describeFailure(opErr), extra)
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
