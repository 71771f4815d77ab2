package propagation_test

import (
	"context"
	"fmt"
	"slices"

	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/propagation"
)

// Hand the request's trace context and tracectx to a child process through
// its environment, as `progressotel run` does; the child extracts them with
// an EnvCarrier (or reads TRACEPARENT and X_TRACECTX_* itself).
func ExampleEnvCarrier() {
	ctx, _ := propagation.WithValue(context.Background(), "transactionid", "tx-1")
	ctx, _ = propagation.WithValue(ctx, "request-id", "r-7")
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	ctx = trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: trace.SpanID{0, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}, TraceFlags: trace.FlagsSampled,
	}))

	var env []string
	propagation.Default().Inject(ctx, propagation.EnvCarrier{SetEnv: func(name, value string) {
		env = append(env, name+"="+value)
	}})
	// cmd.Env = append(os.Environ(), env...) before cmd.Start().
	slices.Sort(env)
	for _, kv := range env {
		fmt.Println(kv)
	}
	// Output:
	// TRACEPARENT=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
	// X_TRACECTX_REQUEST_2DID=r-7
	// X_TRACECTX_TRANSACTIONID=tx-1
}

// The environment spelling of a tracectx key, both ways.
func ExampleEnvName() {
	name, _ := propagation.EnvName("TransactionId")
	fmt.Println(name)
	name, _ = propagation.EnvName("driver_req.id")
	fmt.Println(name)
	key, _ := propagation.EnvKey(name)
	fmt.Println(key)
	// Output:
	// X_TRACECTX_TRANSACTIONID
	// X_TRACECTX_DRIVER_5FREQ_2EID
	// driver_req.id
}
