package propagation

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel"
	otelprop "go.opentelemetry.io/otel/propagation"
)

// KafkaHeader is one Kafka record header.
type KafkaHeader struct {
	Key   string
	Value []byte
}

// KafkaHeaders is a TextMapCarrier over Kafka record headers, so that the
// propagators work on Kafka messages without a Kafka client dependency.
// Convert a client's headers with the generic helpers:
//
//	// franz-go ([]kgo.RecordHeader) and confluent-kafka-go ([]kafka.Header):
//	hs := propagation.KafkaHeadersFrom(rec.Headers)
//	rec.Headers = propagation.KafkaHeadersTo[kgo.RecordHeader](hs)
//	// sarama ([]sarama.RecordHeader, []*sarama.RecordHeader):
//	hs := propagation.KafkaHeadersFromBytes(msg.Headers)
//	msg.Headers = propagation.KafkaHeadersToBytes[sarama.RecordHeader](hs)
//
// Kafka header keys are case-sensitive bytes; Get and Set match them
// case-insensitively, as the propagators expect of HTTP-like carriers.
type KafkaHeaders []KafkaHeader

var _ otelprop.TextMapCarrier = (*KafkaHeaders)(nil)

// Get returns the value of the first header whose key equals key, ignoring
// case, or "".
func (h *KafkaHeaders) Get(key string) string {
	for _, e := range *h {
		if strings.EqualFold(e.Key, key) {
			return string(e.Value)
		}
	}
	return ""
}

// Set replaces every header whose key equals key, ignoring case, by one
// header key = value at the end.
func (h *KafkaHeaders) Set(key, value string) {
	out := (*h)[:0]
	for _, e := range *h {
		if !strings.EqualFold(e.Key, key) {
			out = append(out, e)
		}
	}
	clear((*h)[len(out):])
	*h = append(out, KafkaHeader{Key: key, Value: []byte(value)})
}

// Keys returns the header keys, each once, in order.
func (h *KafkaHeaders) Keys() []string {
	out := make([]string, 0, len(*h))
	seen := make(map[string]struct{}, len(*h))
	for _, e := range *h {
		if _, ok := seen[e.Key]; !ok {
			seen[e.Key] = struct{}{}
			out = append(out, e.Key)
		}
	}
	return out
}

// KafkaHeadersFrom converts headers of a client whose header type is
// struct{Key string; Value []byte} (franz-go kgo.RecordHeader,
// confluent-kafka-go kafka.Header). Values are shared, not copied.
func KafkaHeadersFrom[H stringKeyHeader](hs []H) KafkaHeaders {
	out := make(KafkaHeaders, len(hs))
	for i, e := range hs {
		out[i] = KafkaHeader(e)
	}
	return out
}

// KafkaHeadersTo converts hs to a client's header type (see
// KafkaHeadersFrom).
func KafkaHeadersTo[H stringKeyHeader](hs KafkaHeaders) []H {
	out := make([]H, len(hs))
	for i, e := range hs {
		out[i] = H(e)
	}
	return out
}

type byteHeader = struct {
	Key   []byte
	Value []byte
}

// stringKeyHeader and byteKeyHeader are the header types of Kafka clients.
type (
	stringKeyHeader interface {
		~struct {
			Key   string
			Value []byte
		}
	}
	byteKeyHeader interface{ ~byteHeader }
)

// KafkaHeadersFromBytes converts headers whose type is
// struct{Key, Value []byte} (sarama.RecordHeader, as in a
// ProducerMessage). For []*sarama.RecordHeader use KafkaHeadersFromBytePtrs.
func KafkaHeadersFromBytes[H byteKeyHeader](hs []H) KafkaHeaders {
	out := make(KafkaHeaders, len(hs))
	for i, e := range hs {
		b := byteHeader(e)
		out[i] = KafkaHeader{Key: string(b.Key), Value: b.Value}
	}
	return out
}

// KafkaHeadersFromBytePtrs converts []*sarama.RecordHeader (a consumer
// message's headers); nil elements are skipped.
func KafkaHeadersFromBytePtrs[H byteKeyHeader](hs []*H) KafkaHeaders {
	out := make(KafkaHeaders, 0, len(hs))
	for _, e := range hs {
		if e == nil {
			continue
		}
		b := byteHeader(*e)
		out = append(out, KafkaHeader{Key: string(b.Key), Value: b.Value})
	}
	return out
}

// KafkaHeadersToBytes converts hs to sarama.RecordHeader or another
// struct{Key, Value []byte} type.
func KafkaHeadersToBytes[H byteKeyHeader](hs KafkaHeaders) []H {
	out := make([]H, len(hs))
	for i, e := range hs {
		out[i] = H(byteHeader{Key: []byte(e.Key), Value: e.Value})
	}
	return out
}

// KafkaTenantHeader is the header Ignition's request queue carries the
// tenant in; the rest of its context travels in the body (see
// ParseLoggingContext).
const KafkaTenantHeader = "tenantId"

// InjectKafka writes the context's trace context, baggage and tracectx into
// hs with the global propagator and, for Ignition's consumers, the tracectx
// tenantid as the KafkaTenantHeader header.
func InjectKafka(ctx context.Context, hs *KafkaHeaders) {
	otel.GetTextMapPropagator().Inject(ctx, hs)
	if t, ok := FromContext(ctx).Get("tenantid"); ok {
		hs.Set(KafkaTenantHeader, t)
	}
}

// ExtractKafka returns ctx with the trace context, baggage and tracectx of
// hs extracted by the global propagator. When no x-tracectx-TenantId header
// gave a tenantid, a valid KafkaTenantHeader header does (Ignition sends
// only that one).
func ExtractKafka(ctx context.Context, hs KafkaHeaders) context.Context {
	ctx = otel.GetTextMapPropagator().Extract(ctx, &hs)
	if _, ok := FromContext(ctx).Get("tenantid"); ok {
		return ctx
	}
	if t := hs.Get(KafkaTenantHeader); t != "" {
		if c, err := WithValue(ctx, "tenantid", t); err == nil {
			ctx = c
		}
	}
	return ctx
}
