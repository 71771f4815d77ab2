package tncoprocessor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
)

// tnco is the processor: per record, the fast path (the driver's message,
// checked and redacted), or the stock processors of tnco.transform,
// tnco.redaction and tnco.size_guard, in that order (redaction can make a
// message larger: "" becomes "****").
type tnco struct {
	cfg   *Config
	rules *rules // nil: every record takes the stock processors

	transform processor.Logs // -> redaction -> sizeGuard -> stockResult
	redaction processor.Logs
	sizeGuard processor.Logs // nil without size_guard statements

	records          metric.Int64Counter
	fastSet, slowSet metric.MeasurementOption
	fastRecords      atomic.Int64 // the same count, for tests

	// oversize counts the records the size guard marked with
	// SizeGuardAttribute, by outcome.
	oversize          metric.Int64Counter
	cutSet, reportSet metric.MeasurementOption

	keep map[string]bool // "*": every attribute

	pool sync.Pool // *work
}

// work is the scratch space of one ConsumeLogs call.
type work struct {
	chk  check
	env  envelope
	ms   []member
	vals []byte
	key  []byte
	out  []byte
	scan scanner
}

func (p *tnco) getWork() *work {
	if w, ok := p.pool.Get().(*work); ok {
		return w
	}
	return &work{chk: check{rules: p.rules, keys: map[string]bool{}}}
}

// maxKept bounds the buffers a pooled work keeps.
const maxKept = 1 << 20

func (p *tnco) putWork(w *work) {
	if cap(w.vals) > maxKept || cap(w.out) > maxKept || cap(w.scan.dec) > maxKept {
		return
	}
	p.pool.Put(w)
}

// stockResultKey carries, in the context of a call to the stock
// processors, where their result goes.
type stockResultKey struct{}

func newTNCO(ctx context.Context, set processor.Settings, cfg *Config) (*tnco, error) {
	p := &tnco{cfg: cfg, keep: map[string]bool{}}
	for _, k := range cfg.KeepAttributes {
		p.keep[k] = true
	}
	if r, err := fastPathFor(&cfg.Redaction); err != nil {
		set.Logger.Warn("tnco: every record takes the stock processors: the fast path does not apply this redaction config", zap.Error(err))
	} else {
		p.rules = r
	}
	result := consumer.ConsumeLogsFunc(func(ctx context.Context, ld plog.Logs) error {
		if out, ok := ctx.Value(stockResultKey{}).(*plog.Logs); ok {
			*out = ld
		}
		return nil
	})
	last, err := consumer.NewLogs(result)
	if err != nil {
		return nil, err
	}
	sub := func(t component.Type, name string) processor.Settings {
		s := set
		s.ID = component.NewIDWithName(t, name)
		return s
	}
	afterRedaction := last
	if len(cfg.SizeGuard.LogStatements) > 0 {
		guard := sub(transformFactory.Type(), set.ID.String()+"/size_guard")
		if p.sizeGuard, err = transformFactory.CreateLogs(ctx, guard, &cfg.SizeGuard, last); err != nil {
			return nil, fmt.Errorf("tnco.size_guard: %w", err)
		}
		afterRedaction = p.sizeGuard
	}
	if p.redaction, err = redactionFactory.CreateLogs(ctx, sub(redactionFactory.Type(), set.ID.String()), &cfg.Redaction, afterRedaction); err != nil {
		return nil, fmt.Errorf("tnco.redaction: %w", err)
	}
	if p.transform, err = transformFactory.CreateLogs(ctx, sub(transformFactory.Type(), set.ID.String()), &cfg.Transform, p.redaction); err != nil {
		return nil, fmt.Errorf("tnco.transform: %w", err)
	}
	meter := set.MeterProvider.Meter("github.com/progressotel/progressotel/collector-config/tncoprocessor")
	if p.records, err = meter.Int64Counter("otelcol_processor_tnco_records",
		metric.WithDescription("Progress records by path: fast (the driver's message, checked and redacted) or stock (built by tnco.transform, redacted by tnco.redaction)."),
		metric.WithUnit("{record}")); err != nil {
		return nil, err
	}
	id := attribute.String("processor", set.ID.String())
	p.fastSet = metric.WithAttributeSet(attribute.NewSet(id, attribute.String("path", "fast")))
	p.slowSet = metric.WithAttributeSet(attribute.NewSet(id, attribute.String("path", "stock")))
	if p.oversize, err = meter.Int64Counter("otelcol_processor_tnco_oversize_records",
		metric.WithDescription("Progress records whose message was over max_message_bytes after redaction: cut by the size guard (outcome cut) or replaced by a common/EventsDropped report in the stream (outcome report)."),
		metric.WithUnit("{record}")); err != nil {
		return nil, err
	}
	p.cutSet = metric.WithAttributeSet(attribute.NewSet(id, attribute.String("outcome", "cut")))
	p.reportSet = metric.WithAttributeSet(attribute.NewSet(id, attribute.String("outcome", "report")))
	return p, nil
}

func (p *tnco) start(ctx context.Context, host component.Host) error {
	if p.sizeGuard != nil {
		if err := p.sizeGuard.Start(ctx, host); err != nil {
			return err
		}
	}
	if err := p.redaction.Start(ctx, host); err != nil {
		return err
	}
	return p.transform.Start(ctx, host)
}

func (p *tnco) shutdown(ctx context.Context) error {
	err := p.transform.Shutdown(ctx)
	if e := p.redaction.Shutdown(ctx); err == nil {
		err = e
	}
	if p.sizeGuard != nil {
		if e := p.sizeGuard.Shutdown(ctx); err == nil {
			err = e
		}
	}
	return err
}

// at is a record's place in a plog.Logs.
type at struct{ r, s, l int }

func (p *tnco) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	w := p.getWork()
	defer p.putWork(w)
	var slow []at
	total := 0
	rls := ld.ResourceLogs()
	for ri := range rls.Len() {
		sls := rls.At(ri).ScopeLogs()
		for si := range sls.Len() {
			lrs := sls.At(si).LogRecords()
			for li := range lrs.Len() {
				total++
				if p.rules == nil || !p.fast(w, lrs.At(li)) {
					slow = append(slow, at{ri, si, li})
				}
			}
		}
	}
	if n := int64(total - len(slow)); n > 0 {
		p.records.Add(ctx, n, p.fastSet)
		p.fastRecords.Add(n)
	}
	if len(slow) == 0 {
		p.redactScopes(w, ld)
		return p.dropAttributes(ld), nil
	}
	p.records.Add(ctx, int64(len(slow)), p.slowSet)
	if len(slow) == total {
		// Nothing took the fast path: the stock processors take the
		// whole request, resource and scope attributes included.
		out, err := p.stock(ctx, ld)
		if err != nil {
			return out, err
		}
		return p.dropAttributes(out), nil
	}
	// Copy the other records out, in order, with their resource and
	// scope; then redact what the fast path shares with them, and put
	// their results back in place.
	part := plog.NewLogs()
	last := at{-1, -1, -1}
	var sl plog.ScopeLogs
	for _, a := range slow {
		rl := rls.At(a.r)
		if a.r != last.r {
			nrl := part.ResourceLogs().AppendEmpty()
			rl.Resource().CopyTo(nrl.Resource())
			nrl.SetSchemaUrl(rl.SchemaUrl())
			last.s = -1
		}
		if a.s != last.s || a.r != last.r {
			src := rl.ScopeLogs().At(a.s)
			sl = part.ResourceLogs().At(part.ResourceLogs().Len() - 1).ScopeLogs().AppendEmpty()
			src.Scope().CopyTo(sl.Scope())
			sl.SetSchemaUrl(src.SchemaUrl())
		}
		last = a
		rl.ScopeLogs().At(a.s).LogRecords().At(a.l).CopyTo(sl.LogRecords().AppendEmpty())
	}
	out, err := p.stock(ctx, part)
	if err != nil {
		return ld, err
	}
	p.redactScopes(w, ld)
	i := 0
	for _, orl := range out.ResourceLogs().All() {
		for _, osl := range orl.ScopeLogs().All() {
			for _, olr := range osl.LogRecords().All() {
				if i >= len(slow) {
					return ld, fmt.Errorf("tnco: the stock processors returned more records than they received")
				}
				a := slow[i]
				olr.MoveTo(rls.At(a.r).ScopeLogs().At(a.s).LogRecords().At(a.l))
				i++
			}
		}
	}
	if i != len(slow) {
		return ld, fmt.Errorf("tnco: the stock processors returned %d records of %d", i, len(slow))
	}
	return p.dropAttributes(ld), nil
}

// dropAttributes keeps the record attributes keep_attributes names: the
// message holds the rest, and what is dropped is not marshalled into the
// persistent queue.
func (p *tnco) dropAttributes(ld plog.Logs) plog.Logs {
	if p.keep["*"] {
		return ld
	}
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				lr.Attributes().RemoveIf(func(k string, _ pcommon.Value) bool { return !p.keep[k] })
			}
		}
	}
	return ld
}

// SizeGuardAttribute is the record attribute by which the size guard's
// statements say what they did to a record: "cut" (details cut or
// emptied, marked truncated) or "report" (replaced by a
// common/EventsDropped report). The processor counts it
// (otelcol_processor_tnco_oversize_records) and removes it.
const SizeGuardAttribute = "tnco.size_guard"

// stock runs tnco.transform, tnco.redaction and tnco.size_guard on ld,
// and counts what the size guard did.
func (p *tnco) stock(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	out := ld
	if err := p.transform.ConsumeLogs(context.WithValue(ctx, stockResultKey{}, &out), ld); err != nil {
		return ld, err
	}
	var cut, report int64
	for _, rl := range out.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				v, ok := lr.Attributes().Get(SizeGuardAttribute)
				if !ok {
					continue
				}
				if v.Str() == "report" {
					report++
				} else {
					cut++
				}
				lr.Attributes().Remove(SizeGuardAttribute)
			}
		}
	}
	if cut > 0 {
		p.oversize.Add(ctx, cut, p.cutSet)
	}
	if report > 0 {
		p.oversize.Add(ctx, report, p.reportSet)
	}
	return out, nil
}

// redactScopes applies the attribute rules to the resource and scope
// attributes, as the redaction processor does for every request.
func (p *tnco) redactScopes(w *work, ld plog.Logs) {
	for _, rl := range ld.ResourceLogs().All() {
		w.chk.redactAttrs(rl.Resource().Attributes())
		for _, sl := range rl.ScopeLogs().All() {
			w.chk.redactAttrs(sl.Scope().Attributes())
		}
	}
}

// fast handles one record, or reports false and leaves it as it was.
func (p *tnco) fast(w *work, lr plog.LogRecord) bool {
	body := lr.Body()
	if body.Type() != pcommon.ValueTypeBytes {
		return false
	}
	e := &w.env
	e.reset()
	w.ms, w.vals = w.ms[:0], w.vals[:0]
	if !e.gather(lr) {
		return false
	}
	event, ok := w.members(&w.chk, lr, e)
	if !ok || event && w.chk.keyBlocked("details") {
		return false
	}
	data := body.Bytes().AsRaw() // a copy: pdata has no other way to read bytes
	s := &w.scan
	*s = scanner{r: &w.chk, data: data, edits: s.edits[:0], dec: s.dec[:0]}
	details, same := w.compare(event)
	if !same && event {
		var found bool
		if details, found = w.findDetails(); !found {
			return false
		}
	}
	msg, changed := data, !same || len(s.edits) > 0
	if changed {
		// The expected members, with an event's details taken from the
		// driver's message and edited.
		for i, m := range w.ms {
			if m.val == nil {
				start := len(w.vals)
				w.vals = s.applyEdits(w.vals, details.start, details.end)
				w.ms[i].val = w.vals[start:]
			}
		}
		w.out = appendMembers(w.out[:0], w.ms)
		msg = w.out
	}
	if len(msg) > p.cfg.MaxMessageBytes {
		return false // the size guard of the stock statements decides
	}
	var asMap pcommon.Value
	if p.cfg.Body == BodyMap {
		asMap = pcommon.NewValueEmpty()
		if parseJSON(msg, asMap) != nil {
			return false
		}
	}
	// The record is the fast path's: from here on it changes.
	w.chk.redactAttrs(lr.Attributes())
	switch {
	case p.cfg.Body == BodyMap:
		asMap.MoveTo(body)
	case changed:
		body.SetEmptyBytes().FromRaw(msg)
	}
	return true
}

// span is [start, end) of w.scan.data.
type span struct{ start, end int }

// compare walks the driver's message against the expected members: do
// they agree everywhere but in an event's details, and where are those
// (scanned, with their edits).
func (w *work) compare(event bool) (span, bool) {
	s := &w.scan
	d := s.data
	var details span
	if len(d) == 0 || d[0] != '{' {
		return details, false
	}
	s.pos = 1
	for i, m := range w.ms {
		if i > 0 {
			if s.pos >= len(d) || d[s.pos] != ',' {
				return details, false
			}
			s.pos++
		}
		w.key = append(appendString(w.key[:0], m.key), ':')
		if !bytes.HasPrefix(d[s.pos:], w.key) {
			return details, false
		}
		s.pos += len(w.key)
		if m.val == nil {
			start := s.pos
			if s.scanDetails() != nil {
				return details, false
			}
			details = span{start, s.pos}
			continue
		}
		if !bytes.HasPrefix(d[s.pos:], m.val) {
			return details, false
		}
		s.pos += len(m.val)
	}
	return details, s.pos == len(d)-1 && d[s.pos] == '}'
}

// findDetails finds and scans the details of a driver's message that does
// not agree with the expected envelope. The whole message must be in the
// form scanDetails checks, keys in order and unique, or the stock path's
// JSON reading could take other details.
func (w *work) findDetails() (span, bool) {
	s := &w.scan
	d := s.data
	s.edits = s.edits[:0]
	var details span
	found := false
	if len(d) < 2 || d[0] != '{' {
		return details, false
	}
	s.pos = 1
	var prev string
	for i := 0; ; i++ {
		if s.pos >= len(d) || d[s.pos] != '"' {
			return details, false
		}
		key, err := s.str(nil)
		if err != nil || i > 0 && key <= prev || s.pos >= len(d) || d[s.pos] != ':' {
			return details, false
		}
		prev = key
		s.pos++
		if key == "details" {
			start := s.pos
			if s.scanDetails() != nil {
				return details, false
			}
			details, found = span{start, s.pos}, true
		} else if s.value(1, false) != nil {
			return details, false
		}
		if end, err := s.next('}'); err != nil {
			return details, false
		} else if end {
			return details, found && s.pos == len(d)
		}
	}
}

// redactAttrs applies the redaction processor's attribute rules to m: a
// blocked key's value is masked (whatever its type), and blocked values
// in string values.
func (r *check) redactAttrs(m pcommon.Map) {
	for k, v := range m.All() {
		str := v.Str()
		if out := r.redact(k, str); out != str {
			v.SetStr(out)
		}
	}
}

// parseJSON reads a message (one JSON object, checked or written by the
// fast path) into v: an integer in int64 range as an Int, any other number
// as a Double (the scanner's rule), so that encoding/json writes it back
// as it was written.
func parseJSON(data []byte, v pcommon.Value) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	return fromRaw(raw, v)
}

func fromRaw(raw any, v pcommon.Value) error {
	switch x := raw.(type) {
	case nil:
	case bool:
		v.SetBool(x)
	case string:
		v.SetStr(x)
	case json.Number:
		// An integer that reads back as written; anything else ("-0",
		// exponents, fractions, out of range) a double.
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil && strconv.FormatInt(n, 10) == string(x) {
			v.SetInt(n)
			return nil
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return err
		}
		v.SetDouble(f)
	case []any:
		s := v.SetEmptySlice()
		s.EnsureCapacity(len(x))
		for _, e := range x {
			if err := fromRaw(e, s.AppendEmpty()); err != nil {
				return err
			}
		}
	case map[string]any:
		m := v.SetEmptyMap()
		m.EnsureCapacity(len(x))
		for k, e := range x {
			if err := fromRaw(e, m.PutEmpty(k)); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("tnco: unexpected JSON value %T", raw)
	}
	return nil
}
