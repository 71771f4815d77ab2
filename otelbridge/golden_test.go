package otelbridge_test

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"

	"github.com/progressotel/progressotel/internal/testkit/otlptest"
	"github.com/progressotel/progressotel/internal/testkit/wiretest"
)

// TestGoldenOTLP: every record of the wire corpus as a driver built on
// this library sends it to a collector: through the real OTLP/gRPC
// exporter, to a real gRPC server; a standard record, with no body.
// The golden file holds each request's protobuf encoding (base64; left
// out: the resource, which names the test binary and the SDK's version,
// and the observed timestamp, the SDK's clock at emit time; attributes in
// key order), the
// input of the collector's own golden test (collector-config/tncoprocessor,
// TestGoldenCorpus), which checks that the collector builds from it the
// TNCO message of testdata/message.golden (wire.AppendMessage).
func TestGoldenOTLP(t *testing.T) {
	srv := otlptest.Start(t)
	exp := srv.Exporter(t)
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	seen := 0
	wiretest.Check(t, "otlp", func(t *testing.T, r *sdklog.Record) string {
		if err := exp.Export(context.Background(), []sdklog.Record{*r}); err != nil {
			t.Fatal(err)
		}
		raw := srv.RawBytes()
		if len(raw) != seen+1 {
			t.Fatalf("the server has %d requests, want %d", len(raw), seen+1)
		}
		seen++
		var req collogspb.ExportLogsServiceRequest
		if err := proto.Unmarshal(raw[len(raw)-1], &req); err != nil {
			t.Fatal(err)
		}
		for _, rl := range req.GetResourceLogs() {
			rl.Resource = nil
			for _, sl := range rl.GetScopeLogs() {
				for _, lr := range sl.GetLogRecords() {
					lr.ObservedTimeUnixNano = 0 // the SDK's clock at emit time
					// The envelope's scope is a Go map: its attributes come
					// in map order.
					slices.SortStableFunc(lr.Attributes, func(a, b *commonpb.KeyValue) int { return strings.Compare(a.Key, b.Key) })
				}
			}
		}
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(&req)
		if err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(b)
	})
}
