package propagation_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"go.opentelemetry.io/otel"
	otelprop "go.opentelemetry.io/otel/propagation"

	"github.com/progressotel/progressotel/propagation"
)

// Extract the tracectx headers of an incoming request, whatever their case.
func ExampleTraceCtx() {
	h := http.Header{}
	h.Set("X-Tracectx-TransactionId", "tx-1")
	h.Set("x-tracectx-processid", "p-1")
	h.Set("X-Tracectx-Bad", "line\r\nbreak") // rejected

	ctx := propagation.TraceCtx().Extract(context.Background(), otelprop.HeaderCarrier(h))
	propagation.FromContext(ctx).All(func(k, v string) bool {
		fmt.Printf("tracectx.%s = %s\n", k, v)
		return true
	})
	// Output:
	// tracectx.processid = p-1
	// tracectx.transactionid = tx-1
}

// A driver adds the ids it creates itself; they travel and are stamped like
// the incoming ones.
func ExampleWithValue() {
	ctx, err := propagation.WithValue(context.Background(), "driverrequestid", "d-42")
	if err != nil {
		fmt.Println("not added:", err) // the request goes on without it
	}
	v, _ := propagation.FromContext(ctx).Get("driverrequestid")
	fmt.Println(v)

	_, err = propagation.WithValue(ctx, "externalrequestid", "bad\nvalue")
	fmt.Println(err)
	// Output:
	// d-42
	// key "externalrequestid": propagation: invalid tracectx value: control character 0xa at byte 3
}

// Serve with the middleware so that handlers see the request's trace
// context and tracectx, and call out with the Transport so that they go on.
func ExampleHTTPMiddleware() {
	otel.SetTextMapPropagator(propagation.Default()) // otelbridge.Setup does this

	mux := http.NewServeMux()
	client := &http.Client{Transport: propagation.NewTransport(nil)}
	mux.HandleFunc("POST /api/driver/lifecycle/execute", func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, "http://127.0.0.1:1/downstream", nil)
		_, _ = client.Do(req) // carries traceparent and x-tracectx-* headers
	})
	_ = &http.Server{Addr: "127.0.0.1:8080", Handler: propagation.HTTPMiddleware(mux)}
}

// Read and write the logging_context object of an Ignition request-queue
// message.
func ExampleParseLoggingContext() {
	body := []byte(`{"requestId":"r-1","logging_context":{"transactionId":"tx-1","tenantId":"t-1"}}`)
	var msg struct {
		RequestID      string             `json:"requestId"`
		LoggingContext propagation.Values `json:"logging_context"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		fmt.Println(err)
		return
	}
	ctx := propagation.ContextWithValues(context.Background(), msg.LoggingContext)
	tx, _ := propagation.FromContext(ctx).Get("transactionid")
	fmt.Println("transactionid:", tx)

	out, _ := json.Marshal(propagation.LoggingContextFromContext(ctx))
	fmt.Println(string(out))
	// Output:
	// transactionid: tx-1
	// {"tenantId":"t-1","transactionId":"tx-1"}
}

// Carry the context over Kafka with any client: convert its headers.
func ExampleKafkaHeaders() {
	otel.SetTextMapPropagator(propagation.Default()) // otelbridge.Setup does this
	type recordHeader struct {                       // the shape of kgo.RecordHeader / kafka.Header
		Key   string
		Value []byte
	}
	ctx, _ := propagation.WithValue(context.Background(), "tenantid", "t-1")

	var hs propagation.KafkaHeaders
	propagation.InjectKafka(ctx, &hs)
	produced := propagation.KafkaHeadersTo[recordHeader](hs)

	consumed := propagation.ExtractKafka(context.Background(), propagation.KafkaHeadersFrom(produced))
	t, _ := propagation.FromContext(consumed).Get("tenantid")
	fmt.Println(t)
	// Output:
	// t-1
}
