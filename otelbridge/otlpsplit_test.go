package otelbridge

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/progress/progresstest"
)

type countingExporter struct {
	progresstest.Exporter
	calls []int
	fail  error
}

func (c *countingExporter) Export(ctx context.Context, recs []sdklog.Record) error {
	c.calls = append(c.calls, len(recs))
	if c.fail != nil {
		return c.fail
	}
	return c.Exporter.Export(ctx, recs)
}

func records(t *testing.T, n int, body string) []sdklog.Record {
	t.Helper()
	mem := &progresstest.Exporter{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(mem)))
	for range n {
		var r otellog.Record
		r.SetBody(attribute.StringValue(body))
		r.AddAttributes(attribute.String("progress.details.x", body))
		lp.Logger("t").Emit(context.Background(), r)
	}
	return mem.Records()
}

// A batch whose records would make a request over the collector's 4 MiB
// is sent as several requests, in order, each under the bound.
func TestSplitLogExporterSplitsLargeBatches(t *testing.T) {
	big := strings.Repeat("x", 64<<10)
	recs := records(t, 100, big) // 100 × 128 KiB
	next := &countingExporter{}
	if err := (splitLogExporter{next}).Export(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range next.calls {
		if size := n * requestSize(&recs[0]); size > maxRequestBytes {
			t.Errorf("a request of %d records, %d bytes estimated, over %d", n, size, maxRequestBytes)
		}
		total += n
	}
	if total != 100 || len(next.calls) < 5 {
		t.Errorf("requests %v: want every record, in several requests", next.calls)
	}
	for i, r := range next.Records() {
		if r.Body().AsString() != recs[i].Body().AsString() {
			t.Fatalf("record %d out of order", i)
		}
	}

	small := records(t, 512, "small")
	next = &countingExporter{}
	if err := (splitLogExporter{next}).Export(context.Background(), small); err != nil || len(next.calls) != 1 {
		t.Errorf("a batch of small records is one request: %v %v", next.calls, err)
	}
}

// A failed request fails the export, and the rest of the batch is not sent.
func TestSplitLogExporterStopsAtAFailure(t *testing.T) {
	recs := records(t, 100, strings.Repeat("x", 64<<10))
	next := &countingExporter{fail: errors.New("collector down")}
	if err := (splitLogExporter{next}).Export(context.Background(), recs); err == nil || len(next.calls) != 1 {
		t.Errorf("export: %v after %d requests; want the error after one", err, len(next.calls))
	}
}
