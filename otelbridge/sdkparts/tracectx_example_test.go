package sdkparts_test

import (
	"context"
	"fmt"
	"net/http"

	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel/attribute"
	otelprop "go.opentelemetry.io/otel/propagation"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/propagation"
)

// printExporter prints each record's body and tracectx attributes.
type printExporter struct{}

func (printExporter) Export(_ context.Context, rs []sdklog.Record) error {
	for _, r := range rs {
		fmt.Print(r.Body().AsString())
		r.WalkAttributes(func(kv attribute.KeyValue) bool {
			fmt.Printf(" %s=%s", kv.Key, kv.Value.AsString())
			return true
		})
		fmt.Println()
	}
	return nil
}
func (printExporter) Shutdown(context.Context) error   { return nil }
func (printExporter) ForceFlush(context.Context) error { return nil }

// A driver's slog calls, through the contrib otelslog bridge, are stamped
// with the request's tracectx, redacted. In a driver, otelbridge.Setup
// builds the provider and installs it globally, and the logger needs no
// option: otelslog.NewLogger("example.com/mydriver").
func ExampleNewTraceCtxProcessor() {
	lp := sdklog.NewLoggerProvider(
		sdklog.WithProcessor(sdkparts.NewTraceCtxProcessor(progress.DefaultRedactor())),
		sdklog.WithProcessor(sdklog.NewSimpleProcessor(printExporter{})),
	)
	defer lp.Shutdown(context.Background())
	log := otelslog.NewLogger("example.com/mydriver", otelslog.WithLoggerProvider(lp))

	h := http.Header{}
	h.Set("X-Tracectx-TransactionId", "tx-1")
	h.Set("X-Tracectx-ApiToken", "s3cr3t")
	ctx := propagation.TraceCtx().Extract(context.Background(), otelprop.HeaderCarrier(h))

	log.InfoContext(ctx, "playbook started", "playbook", "install.yaml")
	// Output:
	// playbook started playbook=install.yaml tracectx.apitoken=[REDACTED] tracectx.transactionid=tx-1
}
