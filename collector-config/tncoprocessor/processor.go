package tncoprocessor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/progressotel/progressotel/tncomessage"
)

// tnco is the processor: per progress record, redact its attributes, build
// the TNCO message from them (tncomessage, the one builder) within
// max_message_bytes, set it as the body, and keep the attributes
// keep_attributes names.
type tnco struct {
	cfg    *Config
	rules  *rules
	logger *zap.Logger

	records     metric.Int64Counter
	built       atomic.Int64 // the same count, for tests
	refused     metric.Int64Counter
	refusedSeen atomic.Bool

	// oversize counts the messages over max_message_bytes, by what was
	// done: cut (strings cut or details emptied, marked truncated) or
	// report (replaced by a common/EventsDropped report).
	oversize          metric.Int64Counter
	cutSet, reportSet metric.MeasurementOption
	set               metric.MeasurementOption

	keepAll bool     // keep_attributes holds "*"
	keep    []string // else the names it holds: one or two, so a slice, not a map

	// works keeps the scratch spaces and their caches (keys and texts
	// already judged) across calls; unlike a sync.Pool, a GC does not
	// empty it.
	works chan *work
}

// work is the scratch space of one ConsumeLogs call.
type work struct {
	chk check
	rec record
	out []byte
}

func (p *tnco) getWork() *work {
	select {
	case w := <-p.works:
		return w
	default:
		return &work{chk: check{rules: p.rules, keys: map[string]bool{}}}
	}
}

// maxKept bounds the buffers a pooled work keeps.
const maxKept = 1 << 20

func (p *tnco) putWork(w *work) {
	w.rec.lr = plog.LogRecord{}
	if cap(w.out) > maxKept || cap(w.rec.seen) > 1024 {
		return
	}
	select {
	case p.works <- w:
	default:
	}
}

func newTNCO(set processor.Settings, cfg *Config) (*tnco, error) {
	r, err := rulesFor(&cfg.Redaction)
	if err != nil {
		return nil, fmt.Errorf("tnco.redaction: %w", err)
	}
	p := &tnco{cfg: cfg, rules: r, logger: set.Logger, works: make(chan *work, 2*runtime.GOMAXPROCS(0)),
		keepAll: slices.Contains(cfg.KeepAttributes, "*"), keep: cfg.KeepAttributes}
	meter := set.MeterProvider.Meter("github.com/progressotel/progressotel/collector-config/tncoprocessor")
	if p.records, err = meter.Int64Counter("otelcol_processor_tnco_records",
		metric.WithDescription("Progress records whose TNCO message the processor built."),
		metric.WithUnit("{record}")); err != nil {
		return nil, err
	}
	if p.refused, err = meter.Int64Counter("otelcol_processor_tnco_refused_records",
		metric.WithDescription("Records dropped because they are not progress records (no progress.event_type of either event type): routing/select sends none such here."),
		metric.WithUnit("{record}")); err != nil {
		return nil, err
	}
	id := attribute.String("processor", set.ID.String())
	p.set = metric.WithAttributeSet(attribute.NewSet(id))
	if p.oversize, err = meter.Int64Counter("otelcol_processor_tnco_oversize_records",
		metric.WithDescription("Progress records whose message was over max_message_bytes after redaction: cut (outcome cut) or replaced by a common/EventsDropped report in the stream (outcome report)."),
		metric.WithUnit("{record}")); err != nil {
		return nil, err
	}
	p.cutSet = metric.WithAttributeSet(attribute.NewSet(id, attribute.String("outcome", "cut")))
	p.reportSet = metric.WithAttributeSet(attribute.NewSet(id, attribute.String("outcome", "report")))
	return p, nil
}

func (p *tnco) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	w := p.getWork()
	defer p.putWork(w)
	var built, cut, report, refused int64
	for _, rl := range ld.ResourceLogs().All() {
		w.chk.redactAttrs(rl.Resource().Attributes())
		for _, sl := range rl.ScopeLogs().All() {
			w.chk.redactAttrs(sl.Scope().Attributes())
			sl.LogRecords().RemoveIf(func(lr plog.LogRecord) bool {
				fit, ok := p.build(w, lr)
				if !ok {
					refused++
					return true
				}
				built++
				switch fit {
				case tncomessage.Whole:
				case tncomessage.Replaced:
					report++
				default:
					cut++
				}
				return false
			})
		}
	}
	p.count(ctx, p.records, built, p.set)
	p.built.Add(built)
	p.count(ctx, p.oversize, cut, p.cutSet)
	p.count(ctx, p.oversize, report, p.reportSet)
	if refused > 0 {
		p.count(ctx, p.refused, refused, p.set)
		if !p.refusedSeen.Swap(true) {
			p.logger.Warn("tnco: dropped records that are not progress records (counted in otelcol_processor_tnco_refused_records; logged once)",
				zap.Int64("records", refused))
		}
	}
	return ld, nil
}

func (p *tnco) count(ctx context.Context, c metric.Int64Counter, n int64, set metric.MeasurementOption) {
	if n > 0 {
		c.Add(ctx, n, set)
	}
}

// build redacts the attributes of lr, builds its message from them as its
// body and drops the attributes keep_attributes does not name. It reports
// false, and changes nothing but the redaction, for a record that is not a
// progress record.
func (p *tnco) build(w *work, lr plog.LogRecord) (tncomessage.Fit, bool) {
	attrs := lr.Attributes()
	w.chk.redactAttrs(attrs)
	w.rec.lr = lr
	msg, fit, ok := tncomessage.AppendWithin(w.out[:0], &w.rec, meta(lr), p.cfg.MaxMessageBytes)
	w.out = msg
	if !ok {
		return fit, false
	}
	if p.cfg.Body == BodyMap {
		if err := parseJSON(msg, lr.Body()); err != nil {
			// Not expected: the builder writes JSON. The bytes are kept.
			lr.Body().SetEmptyBytes().FromRaw(msg)
		}
	} else {
		lr.Body().SetEmptyBytes().FromRaw(msg)
	}
	if !p.keepAll {
		attrs.RemoveIf(func(k string, _ pcommon.Value) bool { return !slices.Contains(p.keep, k) })
	}
	return fit, true
}

// parseJSON reads a message (one JSON object the builder wrote) into v: an
// integer in int64 range as an Int, any other number as a Double, so that
// encoding/json writes it back as it was written.
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
