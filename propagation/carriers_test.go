package propagation_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	otelprop "go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/propagation"
)

// useDefaultPropagator installs propagation.Default() as the global
// propagator for one test, as otelbridge.Setup does.
func useDefaultPropagator(t *testing.T) {
	t.Helper()
	prev := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.Default())
	t.Cleanup(func() { otel.SetTextMapPropagator(prev) })
}

// incoming is a context as a request with traceparent and tracectx headers
// leaves it after extraction.
func incoming(t *testing.T) context.Context {
	t.Helper()
	ctx := propagation.Default().Extract(context.Background(), otelprop.MapCarrier{
		"traceparent":              traceparent,
		"x-tracectx-TransactionId": "tx-1",
		"x-tracectx-ProcessId":     "p-1",
		"x-tracectx-TenantId":      "tenant-a",
	})
	ctx, err := propagation.WithValue(ctx, "driverrequestid", "d-1")
	if err != nil {
		t.Fatal(err)
	}
	return ctx
}

func TestHTTPTransportToMiddleware(t *testing.T) {
	useDefaultPropagator(t)
	type seen struct {
		sc   trace.SpanContext
		vals map[string]string
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(propagation.HTTPMiddleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{trace.SpanContextFromContext(r.Context()), propagation.FromContext(r.Context()).Map()}
	})))
	defer srv.Close()

	client := &http.Client{Transport: propagation.NewTransport(srv.Client().Transport)}
	ctx := incoming(t)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(req.Header) != 0 {
		t.Errorf("Transport modified the caller's request: %v", req.Header)
	}

	s := <-got
	if s.sc.TraceID().String() != traceID || !s.sc.IsRemote() {
		t.Errorf("server saw span context %v, want remote trace %s", s.sc, traceID)
	}
	want := propagation.FromContext(ctx).Map()
	if !maps.Equal(s.vals, want) {
		t.Errorf("server saw %v, want %v", s.vals, want)
	}
}

func TestHTTPMiddlewareWithoutHeaders(t *testing.T) {
	useDefaultPropagator(t)
	var vals int
	var sc trace.SpanContext
	h := propagation.HTTPMiddleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		vals = propagation.FromContext(r.Context()).Len()
		sc = trace.SpanContextFromContext(r.Context())
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	if vals != 0 || sc.IsValid() {
		t.Fatalf("a request without headers got %d values, span %v", vals, sc)
	}
}

// Header types with the same shape as the Kafka clients' own:
// kgo.RecordHeader (franz-go) and kafka.Header (confluent-kafka-go) are
// struct{Key string; Value []byte}; sarama.RecordHeader is
// struct{Key, Value []byte}.
type (
	franzHeader struct {
		Key   string
		Value []byte
	}
	saramaHeader struct{ Key, Value []byte }
)

func TestKafkaHeadersRoundTrip(t *testing.T) {
	useDefaultPropagator(t)
	ctx := incoming(t)

	// Producer: inject, then convert to the client's header type.
	var hs propagation.KafkaHeaders
	hs = append(hs, propagation.KafkaHeader{Key: "content-type", Value: []byte("application/json")})
	propagation.InjectKafka(ctx, &hs)
	franz := propagation.KafkaHeadersTo[franzHeader](hs)
	sarama := propagation.KafkaHeadersToBytes[saramaHeader](hs)

	if got := hs.Get(propagation.KafkaTenantHeader); got != "tenant-a" {
		t.Errorf("tenantId header = %q", got)
	}
	if got := hs.Get("traceparent"); !strings.Contains(got, traceID) {
		t.Errorf("traceparent header = %q", got)
	}

	saramaPtrs := make([]*saramaHeader, 0, len(sarama)+1)
	for i := range sarama {
		saramaPtrs = append(saramaPtrs, &sarama[i])
	}
	saramaPtrs = append(saramaPtrs, nil) // consumers may see nil entries

	// Consumer: convert back, then extract.
	for name, back := range map[string]propagation.KafkaHeaders{
		"franz-go":          propagation.KafkaHeadersFrom(franz),
		"sarama":            propagation.KafkaHeadersFromBytes(sarama),
		"sarama (pointers)": propagation.KafkaHeadersFromBytePtrs(saramaPtrs),
	} {
		got := propagation.ExtractKafka(context.Background(), back)
		if sc := trace.SpanContextFromContext(got); sc.TraceID().String() != traceID {
			t.Errorf("%s: trace id %s", name, sc.TraceID())
		}
		if g, w := propagation.FromContext(got).Map(), propagation.FromContext(ctx).Map(); !maps.Equal(g, w) {
			t.Errorf("%s: values %v, want %v", name, g, w)
		}
		if back.Get("content-type") != "application/json" {
			t.Errorf("%s: other headers lost: %v", name, back)
		}
	}
}

func TestKafkaIgnitionTenantHeader(t *testing.T) {
	useDefaultPropagator(t)
	// Ignition's request queue sends only tenantId in the headers.
	hs := propagation.KafkaHeadersFrom([]franzHeader{{Key: "tenantId", Value: []byte("tenant-a")}})
	ctx := propagation.ExtractKafka(context.Background(), hs)
	if v, _ := propagation.FromContext(ctx).Get("tenantid"); v != "tenant-a" {
		t.Fatalf("tenantid = %q", v)
	}
	// An x-tracectx-TenantId header wins over tenantId; a bad tenantId is ignored.
	hs = propagation.KafkaHeaders{{Key: "tenantId", Value: []byte("other")}, {Key: "x-tracectx-tenantid", Value: []byte("tenant-b")}}
	if v, _ := propagation.FromContext(propagation.ExtractKafka(context.Background(), hs)).Get("tenantid"); v != "tenant-b" {
		t.Fatalf("tenantid = %q, want the x-tracectx header's", v)
	}
	hs = propagation.KafkaHeaders{{Key: "tenantId", Value: []byte("a\r\nb")}}
	if n := propagation.FromContext(propagation.ExtractKafka(context.Background(), hs)).Len(); n != 0 {
		t.Fatalf("a bad tenantId header gave %d values", n)
	}
}

func TestKafkaHeadersCarrier(t *testing.T) {
	hs := propagation.KafkaHeaders{{Key: "A", Value: []byte("1")}, {Key: "a", Value: []byte("2")}, {Key: "b", Value: []byte("3")}}
	if got := hs.Get("a"); got != "1" {
		t.Errorf("Get(a) = %q, want the first match", got)
	}
	hs.Set("A", "9")
	if len(hs) != 2 || hs.Get("a") != "9" || hs.Get("b") != "3" {
		t.Errorf("after Set: %v", hs)
	}
	if got := strings.Join(hs.Keys(), ","); got != "b,A" {
		t.Errorf("Keys = %s", got)
	}
}

func TestLoggingContextRoundTrip(t *testing.T) {
	// A request-queue message as Ignition writes it.
	const body = `{"requestId":"r-1","logging_context":{"transactionId":"tx-1","processId":"p-1","tenantId":"tenant-a","tracectx.taskid":"task-1","x-tracectx-Extra":"e-1","attempt":3,"retry":true,"none":null}}`
	var msg struct {
		RequestID      string             `json:"requestId"`
		LoggingContext propagation.Values `json:"logging_context"`
	}
	if err := json.Unmarshal([]byte(body), &msg); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"transactionid": "tx-1", "processid": "p-1", "tenantid": "tenant-a",
		"taskid": "task-1", "extra": "e-1", "attempt": "3", "retry": "true",
	}
	if got := msg.LoggingContext.Map(); !maps.Equal(got, want) {
		t.Fatalf("decoded %v, want %v", got, want)
	}

	// Out again: Ignition's camelCase for the known keys.
	out, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	var generic struct {
		LC map[string]string `json:"logging_context"`
	}
	if err := json.Unmarshal(out, &generic); err != nil {
		t.Fatal(err)
	}
	wantOut := map[string]string{
		"transactionId": "tx-1", "processId": "p-1", "tenantId": "tenant-a",
		"taskId": "task-1", "extra": "e-1", "attempt": "3", "retry": "true",
	}
	if !maps.Equal(generic.LC, wantOut) {
		t.Fatalf("encoded %v, want %v", generic.LC, wantOut)
	}

	// Through a context: in, out, in gives the same values.
	ctx, err := propagation.ContextWithLoggingContext(context.Background(), []byte(`{"transactionId":"tx-1","processId":"p-1"}`))
	if err != nil {
		t.Fatal(err)
	}
	lc, _ := json.Marshal(propagation.LoggingContextFromContext(ctx))
	again, err := propagation.ParseLoggingContext(lc)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := again.Map(), propagation.FromContext(ctx).Map(); !maps.Equal(g, w) || len(g) != 2 {
		t.Fatalf("in-out-in %v, want %v", g, w)
	}
}

func TestLoggingContextBadInput(t *testing.T) {
	v, err := propagation.ParseLoggingContext([]byte(`{"transactionId":"tx-1","processId":"p\n1","nested":{"a":1},"bad key":"x"}`))
	if !errors.Is(err, propagation.ErrInvalidValue) || !errors.Is(err, propagation.ErrInvalidKey) {
		t.Fatalf("error %v, want ErrInvalidValue and ErrInvalidKey", err)
	}
	if got := v.Map(); !maps.Equal(got, map[string]string{"transactionid": "tx-1"}) {
		t.Fatalf("kept %v", got)
	}
	// The json.Unmarshaler keeps the good entries and does not fail the message.
	var msg struct {
		LC propagation.Values `json:"logging_context"`
	}
	if err := json.Unmarshal([]byte(`{"logging_context":{"transactionId":"tx-1","processId":"p\n1"}}`), &msg); err != nil {
		t.Fatalf("a bad entry failed the whole message: %v", err)
	}
	if msg.LC.Len() != 1 {
		t.Fatalf("kept %v", msg.LC.Map())
	}
	// Not an object: an error, for both.
	for _, in := range []string{`"tx-1"`, `[1,2]`, `{`} {
		if _, err := propagation.ParseLoggingContext([]byte(in)); err == nil {
			t.Errorf("ParseLoggingContext(%s) succeeded", in)
		}
		if in == `{` {
			continue // not JSON at all: encoding/json fails before us
		}
		if err := json.Unmarshal([]byte(`{"logging_context":`+in+`}`), &msg); err == nil {
			t.Errorf("Unmarshal of logging_context %s succeeded", in)
		}
	}
	// null and absent are empty, not errors.
	if v, err := propagation.ParseLoggingContext([]byte("null")); err != nil || v.Len() != 0 {
		t.Errorf("null: %v, %v", v.Map(), err)
	}
}

func TestContextWithLoggingContextMerges(t *testing.T) {
	ctx, _ := propagation.WithValue(context.Background(), "driverrequestid", "d-1")
	ctx, err := propagation.ContextWithLoggingContext(ctx, []byte(`{"transactionId":"tx-1"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"driverrequestid": "d-1", "transactionid": "tx-1"}
	if got := propagation.FromContext(ctx).Map(); !maps.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
