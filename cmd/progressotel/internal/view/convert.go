package view

import (
	"encoding/hex"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/log/logtest"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// The received OTLP messages become the SDK's forms that the live view takes: log records as
// sdk/log.Record (built by the SDK's logtest.RecordFactory, the one public way to build a record
// with every field and no attribute limit), spans as sdk/trace.ReadOnlySpan (tracetest.SpanStub).
// Of the resource only service.name is kept, which names a trace until its root span arrives; scopes
// are not kept.

// records converts every log record of rl.
func records(rl []*logspb.ResourceLogs) []sdklog.Record {
	var out []sdklog.Record
	for _, r := range rl {
		res := service(r.GetResource())
		for _, sl := range r.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				out = append(out, record(lr, res))
			}
		}
	}
	return out
}

func record(lr *logspb.LogRecord, res *resource.Resource) sdklog.Record {
	f := logtest.RecordFactory{
		Resource:          res,
		EventName:         lr.GetEventName(),
		Timestamp:         unixNano(lr.GetTimeUnixNano()),
		ObservedTimestamp: unixNano(lr.GetObservedTimeUnixNano()),
		Severity:          log.Severity(lr.GetSeverityNumber()),
		SeverityText:      lr.GetSeverityText(),
		Body:              value(lr.GetBody(), 0),
		Attributes:        attrs(lr.GetAttributes()),
		TraceID:           trace.TraceID(id16(lr.GetTraceId())),
		SpanID:            trace.SpanID(id8(lr.GetSpanId())),
		TraceFlags:        trace.TraceFlags(lr.GetFlags() & 0xff),
		DroppedAttributes: int(lr.GetDroppedAttributesCount()),
	}
	return f.NewRecord()
}

// spans converts every span of rs.
func spans(rs []*tracepb.ResourceSpans) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, r := range rs {
		res := service(r.GetResource())
		for _, ss := range r.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				out = append(out, span(s, res))
			}
		}
	}
	return out
}

func span(s *tracepb.Span, res *resource.Resource) sdktrace.ReadOnlySpan {
	tid := trace.TraceID(id16(s.GetTraceId()))
	stub := tracetest.SpanStub{
		Resource:    res,
		Name:        s.GetName(),
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: id8(s.GetSpanId()), Remote: true}),
		StartTime:   unixNano(s.GetStartTimeUnixNano()),
		EndTime:     unixNano(s.GetEndTimeUnixNano()),
		Attributes:  attrs(s.GetAttributes()),
	}
	if p := id8(s.GetParentSpanId()); p.IsValid() {
		stub.Parent = trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: p, Remote: true})
	}
	stub.Status.Description = s.GetStatus().GetMessage()
	switch s.GetStatus().GetCode() { // OTLP's numbers differ from codes.Code's
	case tracepb.Status_STATUS_CODE_ERROR:
		stub.Status.Code = codes.Error
	case tracepb.Status_STATUS_CODE_OK:
		stub.Status.Code = codes.Ok
	}
	return stub.Snapshot()
}

// service is a resource of r's service.name alone, nil without one.
func service(r *resourcepb.Resource) *resource.Resource {
	for _, kv := range r.GetAttributes() {
		if kv.GetKey() == "service.name" && kv.GetValue().GetStringValue() != "" {
			return resource.NewSchemaless(attribute.String("service.name", kv.GetValue().GetStringValue()))
		}
	}
	return nil
}

// id16 and id8 are a trace id and a span id, zero unless b has the right length.
func id16(b []byte) (id [16]byte) {
	if len(b) == 16 {
		copy(id[:], b)
	}
	return id
}

func id8(b []byte) (id trace.SpanID) {
	if len(b) == 8 {
		copy(id[:], b)
	}
	return id
}

func unixNano(n uint64) time.Time {
	if n == 0 || n > 1<<63-1 {
		return time.Time{}
	}
	return time.Unix(0, int64(n))
}

func attrs(kvs []*commonpb.KeyValue) []attribute.KeyValue {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]attribute.KeyValue, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, attribute.KeyValue{Key: attribute.Key(kv.GetKey()), Value: value(kv.GetValue(), 0)})
	}
	return out
}

// maxDepth bounds the nesting of values converted: deeper ones are left out.
const maxDepth = 16

func value(v *commonpb.AnyValue, depth int) attribute.Value {
	if depth > maxDepth {
		return attribute.Value{}
	}
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return attribute.StringValue(x.StringValue)
	case *commonpb.AnyValue_BoolValue:
		return attribute.BoolValue(x.BoolValue)
	case *commonpb.AnyValue_IntValue:
		return attribute.Int64Value(x.IntValue)
	case *commonpb.AnyValue_DoubleValue:
		return attribute.Float64Value(x.DoubleValue)
	case *commonpb.AnyValue_BytesValue:
		return attribute.StringValue(hex.EncodeToString(x.BytesValue))
	case *commonpb.AnyValue_ArrayValue:
		vals := make([]attribute.Value, 0, len(x.ArrayValue.GetValues()))
		for _, e := range x.ArrayValue.GetValues() {
			vals = append(vals, value(e, depth+1))
		}
		return attribute.SliceValue(vals...)
	case *commonpb.AnyValue_KvlistValue:
		kvs := make([]attribute.KeyValue, 0, len(x.KvlistValue.GetValues()))
		for _, kv := range x.KvlistValue.GetValues() {
			kvs = append(kvs, attribute.KeyValue{Key: attribute.Key(kv.GetKey()), Value: value(kv.GetValue(), depth+1)})
		}
		return attribute.MapValue(kvs...)
	}
	return attribute.Value{}
}
