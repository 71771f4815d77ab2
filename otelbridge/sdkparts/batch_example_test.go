package sdkparts_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

// flakyExporter stands for a collector that is unreachable for its first
// export and healthy afterwards; it prints what it receives.
type flakyExporter struct{ down int }

func (e *flakyExporter) Export(_ context.Context, recs []sdklog.Record) error {
	if e.down > 0 {
		e.down--
		return errors.New("collector unreachable")
	}
	for i := range recs {
		d, _ := wire.Decode(&recs[i])
		if recs[i].EventName() == progress.TypeEventsDropped {
			fmt.Println(recs[i].EventName(), "count:", d.Details["count"], "reason:", d.Details["reason"])
			continue
		}
		fmt.Println(recs[i].EventName(), "sequence:", d.Sequence)
	}
	return nil
}

func (e *flakyExporter) Shutdown(context.Context) error   { return nil }
func (e *flakyExporter) ForceFlush(context.Context) error { return nil }

// A failed export loses its batch; the processor counts the loss and, after
// the next successful export, reports it in the same stream.
func ExampleNewBatchProcessor() {
	bp := sdkparts.NewBatchProcessor(&flakyExporter{down: 1},
		sdkparts.WithExporterName("otlp"), sdkparts.WithExportInterval(time.Hour))
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(bp))
	rec := progress.NewRecorder(progress.WithLoggerProvider(lp))
	ctx := context.Background()

	_ = rec.Record(ctx, progress.Progress(1, 4, "steps"))
	_ = rec.Record(ctx, progress.Progress(2, 4, "steps"))
	if err := lp.ForceFlush(ctx); err != nil { // the collector is down
		fmt.Println(err)
	}
	_ = rec.Record(ctx, progress.Progress(3, 4, "steps"))
	_ = rec.Record(ctx, progress.Progress(4, 4, "steps"))
	if err := lp.Shutdown(ctx); err != nil { // and back
		fmt.Println(err)
	}
	s := bp.Stats()
	fmt.Printf("exported %d, dropped %d, reported %d\n", s.Exported, s.Dropped, s.Reported)
	// Output:
	// sdkparts: otlp: 2 log records failed to export during flush
	// common/Progress sequence: 3
	// common/Progress sequence: 4
	// common/EventsDropped count: 2 reason: export_failed
	// exported 2, dropped 2, reported 2
}
