package otelbridge

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	collogpb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	cpb "go.opentelemetry.io/proto/otlp/common/v1"
	lpb "go.opentelemetry.io/proto/otlp/logs/v1"
	rpb "go.opentelemetry.io/proto/otlp/resource/v1"
	protoimpl "google.golang.org/protobuf/proto"
)

// requestGen makes log export requests with every field the codec writes,
// zero values and empty members included.
type requestGen struct{ r *rand.Rand }

func (g requestGen) str() string {
	return []string{"", "a", "progress.details.taskName", "é日本", string(make([]byte, 200))}[g.r.IntN(5)]
}

func (g requestGen) value(depth int) *cpb.AnyValue {
	switch g.r.IntN(9) {
	case 0:
		return &cpb.AnyValue{}
	case 1:
		return &cpb.AnyValue{Value: &cpb.AnyValue_StringValue{StringValue: g.str()}}
	case 2:
		return &cpb.AnyValue{Value: &cpb.AnyValue_BoolValue{BoolValue: g.r.IntN(2) == 0}}
	case 3:
		return &cpb.AnyValue{Value: &cpb.AnyValue_IntValue{IntValue: []int64{0, -1, 1, math.MaxInt64, math.MinInt64}[g.r.IntN(5)]}}
	case 4:
		return &cpb.AnyValue{Value: &cpb.AnyValue_DoubleValue{DoubleValue: []float64{0, -0.5, math.Inf(1)}[g.r.IntN(3)]}}
	case 5:
		return &cpb.AnyValue{Value: &cpb.AnyValue_BytesValue{BytesValue: []byte(g.str())}}
	case 6:
		if depth < 3 {
			a := &cpb.ArrayValue{}
			for range g.r.IntN(3) {
				a.Values = append(a.Values, g.value(depth+1))
			}
			return &cpb.AnyValue{Value: &cpb.AnyValue_ArrayValue{ArrayValue: a}}
		}
	case 7:
		if depth < 3 {
			return &cpb.AnyValue{Value: &cpb.AnyValue_KvlistValue{KvlistValue: &cpb.KeyValueList{Values: g.kvs(depth + 1)}}}
		}
	}
	return &cpb.AnyValue{Value: &cpb.AnyValue_StringValue{StringValue: "x"}}
}

func (g requestGen) kvs(depth int) []*cpb.KeyValue {
	var out []*cpb.KeyValue
	for range g.r.IntN(4) {
		kv := &cpb.KeyValue{Key: g.str()}
		if g.r.IntN(6) != 0 {
			kv.Value = g.value(depth)
		}
		out = append(out, kv)
	}
	return out
}

func (g requestGen) request() *collogpb.ExportLogsServiceRequest {
	req := &collogpb.ExportLogsServiceRequest{}
	for range g.r.IntN(3) {
		rl := &lpb.ResourceLogs{SchemaUrl: g.str()}
		if g.r.IntN(4) != 0 {
			rl.Resource = &rpb.Resource{Attributes: g.kvs(0), DroppedAttributesCount: uint32(g.r.IntN(2))}
		}
		for range g.r.IntN(3) {
			sl := &lpb.ScopeLogs{SchemaUrl: g.str()}
			if g.r.IntN(4) != 0 {
				sl.Scope = &cpb.InstrumentationScope{Name: g.str(), Version: g.str(), Attributes: g.kvs(0),
					DroppedAttributesCount: uint32(g.r.IntN(2))}
			}
			for range g.r.IntN(4) {
				r := &lpb.LogRecord{
					TimeUnixNano: uint64(g.r.IntN(2)) * 1764432000123456789, ObservedTimeUnixNano: uint64(g.r.IntN(2)) * 17,
					SeverityNumber: lpb.SeverityNumber(g.r.IntN(3) * 9), SeverityText: g.str(), Attributes: g.kvs(0),
					DroppedAttributesCount: uint32(g.r.IntN(2)), Flags: uint32(g.r.IntN(2)), EventName: g.str(),
				}
				if g.r.IntN(2) == 0 {
					r.TraceId, r.SpanId = bytes.Repeat([]byte{7}, 16), bytes.Repeat([]byte{8}, 8)
				}
				if g.r.IntN(3) != 0 {
					r.Body = g.value(0)
				}
				sl.LogRecords = append(sl.LogRecords, r)
			}
			rl.ScopeLogs = append(rl.ScopeLogs, sl)
		}
		req.ResourceLogs = append(req.ResourceLogs, rl)
	}
	return req
}

// The codec writes exactly what the protobuf runtime writes.
func TestLogsCodecMatchesProtobuf(t *testing.T) {
	c := newLogsCodec()
	g := requestGen{rand.New(rand.NewPCG(1, 2))}
	for i := range 3000 {
		req := g.request()
		want, err := protoimpl.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		if b := got.Materialize(); !bytes.Equal(b, want) {
			t.Fatalf("request %d: %d bytes, protobuf writes %d\n got %x\nwant %x", i, len(b), len(want), b, want)
		}
		got.Free()
	}
}

// What the codec does not write goes to gRPC's codec: invalid UTF-8 is
// refused as protobuf refuses it, a field of a later version is written
// by the runtime.
func TestLogsCodecFallsBack(t *testing.T) {
	c := newLogsCodec()
	bad := &collogpb.ExportLogsServiceRequest{ResourceLogs: []*lpb.ResourceLogs{{ScopeLogs: []*lpb.ScopeLogs{{
		LogRecords: []*lpb.LogRecord{{SeverityText: "\xff"}}}}}}}
	if _, err := c.Marshal(bad); err == nil {
		t.Errorf("invalid UTF-8 must be refused, as the protobuf codec refuses it")
	}
	later := &collogpb.ExportLogsServiceRequest{ResourceLogs: []*lpb.ResourceLogs{{ScopeLogs: []*lpb.ScopeLogs{{
		LogRecords: []*lpb.LogRecord{{Attributes: []*cpb.KeyValue{{Key: "k", KeyStrindex: 3}}}}}}}}}
	want, _ := protoimpl.Marshal(later)
	got, err := c.Marshal(later)
	if err != nil || !bytes.Equal(got.Materialize(), want) {
		t.Errorf("a field the codec does not write: %v %x, want %x", err, got.Materialize(), want)
	}
}

func BenchmarkLogsCodec(b *testing.B) {
	g := requestGen{rand.New(rand.NewPCG(3, 4))}
	req := &collogpb.ExportLogsServiceRequest{ResourceLogs: []*lpb.ResourceLogs{{
		Resource:  &rpb.Resource{Attributes: []*cpb.KeyValue{{Key: "service.name", Value: &cpb.AnyValue{Value: &cpb.AnyValue_StringValue{StringValue: "d"}}}}},
		ScopeLogs: []*lpb.ScopeLogs{{Scope: &cpb.InstrumentationScope{Name: "github.com/progressotel/progressotel/progress"}}}}}}
	for range 512 {
		r := &lpb.LogRecord{TimeUnixNano: 1, SeverityNumber: 9, SeverityText: "INFO", EventName: "ansible/TaskCompletedOnHost",
			Body: &cpb.AnyValue{Value: &cpb.AnyValue_BytesValue{BytesValue: make([]byte, 700)}}}
		for range 20 {
			r.Attributes = append(r.Attributes, &cpb.KeyValue{Key: "progress.details.taskName", Value: g.value(3)})
		}
		req.ResourceLogs[0].ScopeLogs[0].LogRecords = append(req.ResourceLogs[0].ScopeLogs[0].LogRecords, r)
	}
	b.Run("protobuf", func(b *testing.B) {
		c := newLogsCodec().fallback
		for b.Loop() {
			bs, _ := c.Marshal(req)
			bs.Free()
		}
	})
	b.Run("logsCodec", func(b *testing.B) {
		c := newLogsCodec()
		for b.Loop() {
			bs, _ := c.Marshal(req)
			bs.Free()
		}
	})
}

// The codec refuses a request over the exporter's limit, as the exporter's
// own check did, instead of writing it.
func TestLogsCodecRefusesOversizeRequests(t *testing.T) {
	big := &collogpb.ExportLogsServiceRequest{ResourceLogs: []*lpb.ResourceLogs{{ScopeLogs: []*lpb.ScopeLogs{{
		LogRecords: []*lpb.LogRecord{{Body: &cpb.AnyValue{Value: &cpb.AnyValue_BytesValue{BytesValue: make([]byte, maxLogRequestBytes)}}}}}}}}}
	if _, err := newLogsCodec().Marshal(big); err == nil {
		t.Errorf("a request over %d bytes was written", maxLogRequestBytes)
	}
}
