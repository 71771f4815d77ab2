package prettyexporter

import (
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/progress"
)

// recordKind tells the formats how to lay out a record.
type recordKind uint8

const (
	kindLog        recordKind = iota // any record not emitted by package progress
	kindEvent                        // a ResourceTransitionProgressEvent
	kindTransition                   // a ConditionTransition
)

// pathValue is an attribute below a prefix: its path still escaped as on
// the wire (see progress.Flatten).
type pathValue struct {
	path string
	v    attribute.Value
}

// view is a record split along the wire contract, in one pass over its
// attributes and without copying any string. It mirrors progress.Decode,
// which the tests use as the reference, but builds no maps, so that the
// exporters stay cheaper than the SDK's stdoutlog.
type view struct {
	kind     recordKind
	name     string // EventName: progressEventType, stream, or a log's event name
	details  []pathValue
	traceCtx []attribute.KeyValue
	txID     string
	hasTx    bool

	compName, compVersion         string
	resType, resID, resNS, resUID string
	scope                         []pathValue
	tenant                        string
	gen, seq                      int64
	hasGen, hasSeq, truncated     bool

	tr struct {
		status, reason, message    string
		pStatus, pReason, pMessage string
		hasPrev                    bool
	}
	extra []attribute.KeyValue
}

var viewPool = sync.Pool{New: func() any {
	return &view{details: make([]pathValue, 0, 32), extra: make([]attribute.KeyValue, 0, 8)}
}}

func getView() *view { return viewPool.Get().(*view) }

func putView(v *view) {
	if cap(v.details) > 4096 || cap(v.extra) > 4096 {
		return
	}
	clear(v.details)
	clear(v.traceCtx)
	clear(v.scope)
	clear(v.extra)
	*v = view{details: v.details[:0], traceCtx: v.traceCtx[:0], scope: v.scope[:0], extra: v.extra[:0]}
	viewPool.Put(v)
}

// load fills v from r.
func (v *view) load(r *sdklog.Record) {
	v.name = r.EventName()
	var et string
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		if kv.Key == progress.AttrEventType {
			et = kv.Value.AsString()
			return false
		}
		return true
	})
	switch et {
	case progress.EventType:
		v.kind = kindEvent
	case progress.TransitionEventType:
		v.kind = kindTransition
	default:
		v.kind = kindLog
	}
	r.WalkAttributes(v.add)
}

const transitionPrefix = "progress."

func (v *view) add(kv attribute.KeyValue) bool {
	k := string(kv.Key)
	if strings.HasPrefix(k, progress.TraceCtxPrefix) {
		v.traceCtx = append(v.traceCtx, kv)
		if k == txKey {
			v.txID, v.hasTx = kv.Value.String(), true
		}
		return true
	}
	if v.kind == kindLog {
		// An ordinary log keeps every attribute as it is, even one that
		// looks like part of the progress contract.
		v.extra = append(v.extra, kv)
		return true
	}
	if v.kind == kindTransition && v.transitionAttr(k, kv.Value) {
		return true
	}
	switch {
	case k == progress.AttrEventType:
	case strings.HasPrefix(k, progress.DetailsPrefix):
		v.details = append(v.details, pathValue{k[len(progress.DetailsPrefix):], kv.Value})
	case k == progress.AttrComponentName:
		v.compName = kv.Value.String()
	case k == progress.AttrComponentVersion:
		v.compVersion = kv.Value.String()
	case k == progress.AttrResourceType:
		v.resType = kv.Value.String()
	case k == progress.AttrResourceID:
		v.resID = kv.Value.String()
	case k == progress.AttrResourceNamespace:
		v.resNS = kv.Value.String()
	case k == progress.AttrResourceUID:
		v.resUID = kv.Value.String()
	case strings.HasPrefix(k, progress.ScopePrefix):
		v.scope = append(v.scope, pathValue{k[len(progress.ScopePrefix):], kv.Value})
	case k == progress.AttrTenant:
		v.tenant = kv.Value.String()
	case k == progress.AttrObservedGeneration && kv.Value.Type() == attribute.INT64:
		v.gen, v.hasGen = kv.Value.AsInt64(), true
	case k == progress.AttrSequence && kv.Value.Type() == attribute.INT64:
		v.seq, v.hasSeq = kv.Value.AsInt64(), true
	case k == progress.AttrTruncated && kv.Value.Type() == attribute.BOOL:
		v.truncated = kv.Value.AsBool()
	default:
		v.extra = append(v.extra, kv)
	}
	return true
}

const txKey = progress.TraceCtxPrefix + "transactionid"

// transitionAttr takes the progress.<stream>.* payload of a transition.
func (v *view) transitionAttr(k string, val attribute.Value) bool {
	s := v.name
	if len(k) <= len(transitionPrefix)+len(s)+1 || !strings.HasPrefix(k, transitionPrefix) ||
		k[len(transitionPrefix):len(transitionPrefix)+len(s)] != s || k[len(transitionPrefix)+len(s)] != '.' {
		return false
	}
	switch k[len(transitionPrefix)+len(s)+1:] {
	case "status":
		v.tr.status = val.String()
	case "reason":
		v.tr.reason = val.String()
	case "message":
		v.tr.message = val.String()
	case "previous.status":
		v.tr.pStatus, v.tr.hasPrev = val.String(), true
	case "previous.reason":
		v.tr.pReason, v.tr.hasPrev = val.String(), true
	case "previous.message":
		v.tr.pMessage, v.tr.hasPrev = val.String(), true
	default:
		return false
	}
	return true
}

// hasResource reports whether any resource field is set.
func (v *view) hasResource() bool {
	return v.resType != "" || v.resID != "" || v.resNS != "" || v.resUID != ""
}

// levelName maps a severity number to its short name, falling back to the
// record's severity text.
func levelName(r *sdklog.Record) string {
	s := r.Severity()
	switch {
	case s >= 21:
		return "FATAL"
	case s >= 17:
		return "ERROR"
	case s >= 13:
		return "WARN"
	case s >= 9:
		return "INFO"
	case s >= 5:
		return "DEBUG"
	case s >= 1:
		return "TRACE"
	}
	if t := r.SeverityText(); t != "" {
		return t
	}
	return "UNSPECIFIED"
}
