package sdkparts

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
	"github.com/progressotel/progressotel/propagation"
)

// NewTraceCtxProcessor returns a processor that stamps every tracectx value
// of the emit context onto every record (progress events, transitions and
// slog logs alike) as a "tracectx.<key>" string attribute, the shape of
// Ignition's logstash lines, replacing a value stamped under the same key.
// A key red.SecretKey reports as secret gets wire.Redacted as its value,
// any other value goes through red.Value; a nil red redacts nothing.
//
// It mutates the record in OnEmit and exports nothing, so it must be
// registered before the processor that exports:
//
//	sdklog.NewLoggerProvider(
//		sdklog.WithProcessor(sdkparts.NewTraceCtxProcessor(progress.DefaultRedactor())),
//		sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)),
//	)
//
// OnEmit never blocks, allocates nothing when the context carries no
// tracectx, and is safe for concurrent use.
func NewTraceCtxProcessor(red *progress.Redactor) sdklog.Processor {
	return &traceCtxProcessor{red: red}
}

type traceCtxProcessor struct {
	red *progress.Redactor
}

// maxStackAttrs covers the usual tracectx set (transactionid, processid,
// taskid, tenantid, driverrequestid, externalrequestid) without a heap
// allocation for the attribute slice.
const maxStackAttrs = 8

// Enabled returns false: the processor only decorates records, so it leaves
// the decision to the processors after it (the SDK calls OnEmit on every
// processor whatever Enabled said; voting true would build records that
// the others filter out).
func (p *traceCtxProcessor) Enabled(context.Context, sdklog.EnabledParameters) bool { return false }

func (p *traceCtxProcessor) OnEmit(ctx context.Context, r *sdklog.Record) error {
	if ctx == nil || r == nil {
		return nil
	}
	vals := propagation.FromContext(ctx)
	if vals.Len() == 0 {
		return nil
	}
	var buf [maxStackAttrs]attribute.KeyValue
	attrs := buf[:0]
	vals.All(func(k, v string) bool {
		if p.red.SecretKey(k) {
			v = wire.Redacted
		} else {
			v = p.red.Value(v)
		}
		attrs = append(attrs, attribute.String(attrKey(k), v))
		return true
	})
	r.AddAttributes(attrs...)
	return nil
}

func (p *traceCtxProcessor) Shutdown(context.Context) error   { return nil }
func (p *traceCtxProcessor) ForceFlush(context.Context) error { return nil }

// knownKeys avoids a string concatenation per record for the keys every
// Ignition request carries.
var knownKeys = map[string]string{
	"transactionid":     wire.TraceCtxPrefix + "transactionid",
	"processid":         wire.TraceCtxPrefix + "processid",
	"taskid":            wire.TraceCtxPrefix + "taskid",
	"tenantid":          wire.TraceCtxPrefix + "tenantid",
	"driverrequestid":   wire.TraceCtxPrefix + "driverrequestid",
	"externalrequestid": wire.TraceCtxPrefix + "externalrequestid",
}

func attrKey(k string) string {
	if s, ok := knownKeys[k]; ok {
		return s
	}
	return wire.TraceCtxPrefix + k
}
