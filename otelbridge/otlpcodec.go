package otelbridge

import (
	"fmt"
	"math"
	"sync"
	"unicode/utf8"

	collogpb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	cpb "go.opentelemetry.io/proto/otlp/common/v1"
	lpb "go.opentelemetry.io/proto/otlp/logs/v1"
	rpb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	protoimpl "google.golang.org/protobuf/proto"
)

// logsCodec is the gRPC codec of Setup's OTLP/gRPC log exporter. It writes
// the log export request itself, the same bytes as gRPC's protobuf codec,
// into a buffer from gRPC's pool: the protobuf runtime sizes and writes
// these messages through reflection, and in a driver exporting thousands
// of records a second that was a fifth of its CPU (BENCHMARKS.md, "Cost
// per event"). Everything else, and any request holding a field it does
// not write, goes to gRPC's protobuf codec.
type logsCodec struct{ fallback encoding.CodecV2 }

func newLogsCodec() logsCodec { return logsCodec{fallback: encoding.GetCodecV2(proto.Name)} }

// logsCodecOption makes the log exporter's calls use logsCodec.
func logsCodecOption() grpc.DialOption {
	return grpc.WithDefaultCallOptions(grpc.ForceCodecV2(newLogsCodec()))
}

// Name is the protobuf codec's: the content type stays application/grpc+proto.
func (logsCodec) Name() string { return proto.Name }

func (c logsCodec) Unmarshal(data mem.BufferSlice, v any) error { return c.fallback.Unmarshal(data, v) }

// maxLogRequestBytes is the largest request the codec writes: the OTLP
// exporter's own limit (otlploggrpc's default), which Setup turns off there
// because checking it costs the exporter a second sizing of every request
// through the protobuf runtime. The codec knows the size as it writes.
const maxLogRequestBytes = 64 << 20

func (c logsCodec) Marshal(v any) (mem.BufferSlice, error) {
	req, ok := v.(*collogpb.ExportLogsServiceRequest)
	if !ok {
		return c.fallback.Marshal(v)
	}
	sz := sizerPool.Get().(*sizer)
	defer sizerPool.Put(sz)
	sz.sizes = sz.sizes[:0]
	n, ok := sz.request(req)
	if !ok {
		if size := protoimpl.Size(req); size > maxLogRequestBytes {
			return nil, tooLarge(size)
		}
		return c.fallback.Marshal(v)
	}
	if n > maxLogRequestBytes {
		return nil, tooLarge(n)
	}
	pool := mem.DefaultBufferPool()
	buf := pool.Get(n)
	w := writer{b: (*buf)[:0], sizes: sz.sizes}
	w.request(req)
	if len(w.b) != n {
		pool.Put(buf)
		return c.fallback.Marshal(v) // cannot happen: the sizes are the writer's
	}
	*buf = w.b
	if cap(sz.sizes) > maxKeptSizes {
		sz.sizes = nil
	}
	return mem.BufferSlice{mem.NewBuffer(buf, pool)}, nil
}

// sizerPool keeps the sizes of one request for the next (a batch of 512
// records needs about 15,000); maxKeptSizes bounds what is kept.
var sizerPool = sync.Pool{New: func() any { return new(sizer) }}

const maxKeptSizes = 1 << 16

func tooLarge(n int) error {
	return fmt.Errorf("otelbridge: OTLP log request of %d bytes, over %d: not sent", n, maxLogRequestBytes)
}

// The field numbers of the OTLP log messages (opentelemetry-proto).
const (
	fRequestResourceLogs = 1

	fResourceLogsResource  = 1
	fResourceLogsScopeLogs = 2
	fResourceLogsSchemaURL = 3

	fResourceAttributes = 1
	fResourceDropped    = 2

	fScopeLogsScope     = 1
	fScopeLogsRecords   = 2
	fScopeLogsSchemaURL = 3

	fScopeName       = 1
	fScopeVersion    = 2
	fScopeAttributes = 3
	fScopeDropped    = 4

	fRecordTime       = 1
	fRecordSeverity   = 2
	fRecordSevText    = 3
	fRecordBody       = 5
	fRecordAttributes = 6
	fRecordDropped    = 7
	fRecordFlags      = 8
	fRecordTraceID    = 9
	fRecordSpanID     = 10
	fRecordObserved   = 11
	fRecordEventName  = 12

	fKVKey   = 1
	fKVValue = 2

	fAnyString = 1
	fAnyBool   = 2
	fAnyInt    = 3
	fAnyDouble = 4
	fAnyArray  = 5
	fAnyKVList = 6
	fAnyBytes  = 7

	fListValues = 1
)

// sizer computes the size of every embedded message in the order the
// writer meets them, so that the writer writes each length prefix without
// measuring again. It reports false for a request it does not write.
type sizer struct{ sizes []int }

func tagSize(field protowire.Number) int { return protowire.SizeTag(field) }

func lenSize(field protowire.Number, n int) int { return tagSize(field) + protowire.SizeBytes(n) }

func strSize(field protowire.Number, s string) (int, bool) {
	if s == "" {
		return 0, true
	}
	return lenSize(field, len(s)), utf8.ValidString(s)
}

func varintSize(field protowire.Number, v uint64) int {
	if v == 0 {
		return 0
	}
	return tagSize(field) + protowire.SizeVarint(v)
}

// slot reserves the size of the next message and returns its index.
func (s *sizer) slot() int {
	s.sizes = append(s.sizes, 0)
	return len(s.sizes) - 1
}

func (s *sizer) request(r *collogpb.ExportLogsServiceRequest) (int, bool) {
	n := 0
	for _, rl := range r.ResourceLogs {
		m, ok := s.resourceLogs(rl)
		if !ok {
			return 0, false
		}
		n += lenSize(fRequestResourceLogs, m)
	}
	return n, true
}

func (s *sizer) resourceLogs(rl *lpb.ResourceLogs) (int, bool) {
	i := s.slot()
	n := 0
	if rl.Resource != nil {
		m, ok := s.resource(rl.Resource)
		if !ok {
			return 0, false
		}
		n += lenSize(fResourceLogsResource, m)
	}
	for _, sl := range rl.ScopeLogs {
		m, ok := s.scopeLogs(sl)
		if !ok {
			return 0, false
		}
		n += lenSize(fResourceLogsScopeLogs, m)
	}
	m, ok := strSize(fResourceLogsSchemaURL, rl.SchemaUrl)
	n += m
	s.sizes[i] = n
	return n, ok
}

func (s *sizer) resource(r *rpb.Resource) (int, bool) {
	if len(r.EntityRefs) > 0 {
		return 0, false
	}
	i := s.slot()
	n, ok := s.keyValues(fResourceAttributes, r.Attributes)
	n += varintSize(fResourceDropped, uint64(r.DroppedAttributesCount))
	s.sizes[i] = n
	return n, ok
}

func (s *sizer) scopeLogs(sl *lpb.ScopeLogs) (int, bool) {
	i := s.slot()
	n := 0
	if sl.Scope != nil {
		m, ok := s.scope(sl.Scope)
		if !ok {
			return 0, false
		}
		n += lenSize(fScopeLogsScope, m)
	}
	for _, r := range sl.LogRecords {
		m, ok := s.record(r)
		if !ok {
			return 0, false
		}
		n += lenSize(fScopeLogsRecords, m)
	}
	m, ok := strSize(fScopeLogsSchemaURL, sl.SchemaUrl)
	n += m
	s.sizes[i] = n
	return n, ok
}

func (s *sizer) scope(sc *cpb.InstrumentationScope) (int, bool) {
	i := s.slot()
	n, ok1 := strSize(fScopeName, sc.Name)
	m, ok2 := strSize(fScopeVersion, sc.Version)
	n += m
	m, ok3 := s.keyValues(fScopeAttributes, sc.Attributes)
	n += m + varintSize(fScopeDropped, uint64(sc.DroppedAttributesCount))
	s.sizes[i] = n
	return n, ok1 && ok2 && ok3
}

func (s *sizer) record(r *lpb.LogRecord) (int, bool) {
	i := s.slot()
	n := 0
	if r.TimeUnixNano != 0 {
		n += tagSize(fRecordTime) + 8
	}
	n += varintSize(fRecordSeverity, uint64(r.SeverityNumber))
	m, ok := strSize(fRecordSevText, r.SeverityText)
	n += m
	if r.Body != nil {
		b, bok := s.anyValue(r.Body)
		ok = ok && bok
		n += lenSize(fRecordBody, b)
	}
	m, aok := s.keyValues(fRecordAttributes, r.Attributes)
	n += m + varintSize(fRecordDropped, uint64(r.DroppedAttributesCount))
	if r.Flags != 0 {
		n += tagSize(fRecordFlags) + 4
	}
	if len(r.TraceId) > 0 {
		n += lenSize(fRecordTraceID, len(r.TraceId))
	}
	if len(r.SpanId) > 0 {
		n += lenSize(fRecordSpanID, len(r.SpanId))
	}
	if r.ObservedTimeUnixNano != 0 {
		n += tagSize(fRecordObserved) + 8
	}
	m, eok := strSize(fRecordEventName, r.EventName)
	n += m
	s.sizes[i] = n
	return n, ok && aok && eok
}

func (s *sizer) keyValues(field protowire.Number, kvs []*cpb.KeyValue) (int, bool) {
	n := 0
	for _, kv := range kvs {
		if kv == nil || kv.KeyStrindex != 0 {
			return 0, false
		}
		i := s.slot()
		m, ok := strSize(fKVKey, kv.Key)
		if !ok {
			return 0, false
		}
		if kv.Value != nil {
			v, ok := s.anyValue(kv.Value)
			if !ok {
				return 0, false
			}
			m += lenSize(fKVValue, v)
		}
		s.sizes[i] = m
		n += lenSize(field, m)
	}
	return n, true
}

func (s *sizer) anyValue(v *cpb.AnyValue) (int, bool) {
	i := s.slot()
	n := 0
	ok := true
	switch x := v.Value.(type) {
	case nil:
	case *cpb.AnyValue_StringValue:
		// A oneof member is written even when empty.
		n = lenSize(fAnyString, len(x.StringValue))
		ok = utf8.ValidString(x.StringValue)
	case *cpb.AnyValue_BoolValue:
		n = tagSize(fAnyBool) + 1
	case *cpb.AnyValue_IntValue:
		n = tagSize(fAnyInt) + protowire.SizeVarint(uint64(x.IntValue))
	case *cpb.AnyValue_DoubleValue:
		n = tagSize(fAnyDouble) + 8
	case *cpb.AnyValue_BytesValue:
		n = lenSize(fAnyBytes, len(x.BytesValue))
	case *cpb.AnyValue_ArrayValue:
		if x.ArrayValue == nil {
			return 0, false
		}
		j := s.slot()
		m := 0
		for _, e := range x.ArrayValue.Values {
			if e == nil {
				return 0, false
			}
			ev, eok := s.anyValue(e)
			if !eok {
				return 0, false
			}
			m += lenSize(fListValues, ev)
		}
		s.sizes[j] = m
		n = lenSize(fAnyArray, m)
	case *cpb.AnyValue_KvlistValue:
		if x.KvlistValue == nil {
			return 0, false
		}
		j := s.slot()
		m, kok := s.keyValues(fListValues, x.KvlistValue.Values)
		if !kok {
			return 0, false
		}
		s.sizes[j] = m
		n = lenSize(fAnyKVList, m)
	default: // string_value_strindex, or a member of a later version
		return 0, false
	}
	s.sizes[i] = n
	return n, ok
}

// writer writes a request sized by sizer, taking the sizes in the same
// order.
type writer struct {
	b     []byte
	sizes []int
	next  int
}

// size takes the next size; peek reads it and leaves it to anyValue,
// which takes its own.
func (w *writer) size() int {
	n := w.sizes[w.next]
	w.next++
	return n
}

func (w *writer) peek() int { return w.sizes[w.next] }

func (w *writer) open(field protowire.Number, n int) {
	w.b = protowire.AppendTag(w.b, field, protowire.BytesType)
	w.b = protowire.AppendVarint(w.b, uint64(n))
}

func (w *writer) str(field protowire.Number, s string) {
	if s != "" {
		w.b = protowire.AppendTag(w.b, field, protowire.BytesType)
		w.b = protowire.AppendString(w.b, s)
	}
}

func (w *writer) varint(field protowire.Number, v uint64) {
	if v != 0 {
		w.b = protowire.AppendTag(w.b, field, protowire.VarintType)
		w.b = protowire.AppendVarint(w.b, v)
	}
}

func (w *writer) request(r *collogpb.ExportLogsServiceRequest) {
	for _, rl := range r.ResourceLogs {
		w.open(fRequestResourceLogs, w.size())
		if rl.Resource != nil {
			w.open(fResourceLogsResource, w.size())
			w.keyValues(fResourceAttributes, rl.Resource.Attributes)
			w.varint(fResourceDropped, uint64(rl.Resource.DroppedAttributesCount))
		}
		for _, sl := range rl.ScopeLogs {
			w.open(fResourceLogsScopeLogs, w.size())
			if sc := sl.Scope; sc != nil {
				w.open(fScopeLogsScope, w.size())
				w.str(fScopeName, sc.Name)
				w.str(fScopeVersion, sc.Version)
				w.keyValues(fScopeAttributes, sc.Attributes)
				w.varint(fScopeDropped, uint64(sc.DroppedAttributesCount))
			}
			for _, r := range sl.LogRecords {
				w.open(fScopeLogsRecords, w.size())
				w.record(r)
			}
			w.str(fScopeLogsSchemaURL, sl.SchemaUrl)
		}
		w.str(fResourceLogsSchemaURL, rl.SchemaUrl)
	}
}

func (w *writer) record(r *lpb.LogRecord) {
	if r.TimeUnixNano != 0 {
		w.b = protowire.AppendTag(w.b, fRecordTime, protowire.Fixed64Type)
		w.b = protowire.AppendFixed64(w.b, r.TimeUnixNano)
	}
	w.varint(fRecordSeverity, uint64(r.SeverityNumber))
	w.str(fRecordSevText, r.SeverityText)
	if r.Body != nil {
		w.open(fRecordBody, w.peek())
		w.anyValue(r.Body)
	}
	w.keyValues(fRecordAttributes, r.Attributes)
	w.varint(fRecordDropped, uint64(r.DroppedAttributesCount))
	if r.Flags != 0 {
		w.b = protowire.AppendTag(w.b, fRecordFlags, protowire.Fixed32Type)
		w.b = protowire.AppendFixed32(w.b, r.Flags)
	}
	if len(r.TraceId) > 0 {
		w.b = protowire.AppendTag(w.b, fRecordTraceID, protowire.BytesType)
		w.b = protowire.AppendBytes(w.b, r.TraceId)
	}
	if len(r.SpanId) > 0 {
		w.b = protowire.AppendTag(w.b, fRecordSpanID, protowire.BytesType)
		w.b = protowire.AppendBytes(w.b, r.SpanId)
	}
	if r.ObservedTimeUnixNano != 0 {
		w.b = protowire.AppendTag(w.b, fRecordObserved, protowire.Fixed64Type)
		w.b = protowire.AppendFixed64(w.b, r.ObservedTimeUnixNano)
	}
	w.str(fRecordEventName, r.EventName)
}

func (w *writer) keyValues(field protowire.Number, kvs []*cpb.KeyValue) {
	for _, kv := range kvs {
		w.open(field, w.size())
		w.str(fKVKey, kv.Key)
		if kv.Value != nil {
			w.open(fKVValue, w.peek())
			w.anyValue(kv.Value)
		}
	}
}

func (w *writer) anyValue(v *cpb.AnyValue) {
	w.next++ // this value's own size, which its caller wrote (peek)
	switch x := v.Value.(type) {
	case *cpb.AnyValue_StringValue:
		w.b = protowire.AppendTag(w.b, fAnyString, protowire.BytesType)
		w.b = protowire.AppendString(w.b, x.StringValue)
	case *cpb.AnyValue_BoolValue:
		w.b = protowire.AppendTag(w.b, fAnyBool, protowire.VarintType)
		w.b = protowire.AppendVarint(w.b, protowire.EncodeBool(x.BoolValue))
	case *cpb.AnyValue_IntValue:
		w.b = protowire.AppendTag(w.b, fAnyInt, protowire.VarintType)
		w.b = protowire.AppendVarint(w.b, uint64(x.IntValue))
	case *cpb.AnyValue_DoubleValue:
		w.b = protowire.AppendTag(w.b, fAnyDouble, protowire.Fixed64Type)
		w.b = protowire.AppendFixed64(w.b, math.Float64bits(x.DoubleValue))
	case *cpb.AnyValue_BytesValue:
		w.b = protowire.AppendTag(w.b, fAnyBytes, protowire.BytesType)
		w.b = protowire.AppendBytes(w.b, x.BytesValue)
	case *cpb.AnyValue_ArrayValue:
		w.open(fAnyArray, w.size())
		for _, e := range x.ArrayValue.Values {
			w.open(fListValues, w.peek())
			w.anyValue(e)
		}
	case *cpb.AnyValue_KvlistValue:
		w.open(fAnyKVList, w.size())
		w.keyValues(fListValues, x.KvlistValue.Values)
	}
}
