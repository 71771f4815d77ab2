// Package shutdown holds the one rule by which a shutdown cuts the
// exports still in progress, shared by sdkparts' BatchProcessor and
// otelbridge's span shutdown.
package shutdown

import (
	"context"
	"time"
)

// CancelGrace is how long before its deadline a shutdown cancels the export in
// progress (at most a quarter of the time it was given), so that an
// exporter that honours its context returns by the deadline. The shutdown
// itself returns at its deadline whatever the export does.
const CancelGrace = 500 * time.Millisecond

// CutContext returns the context a shutdown cuts the exports with: ctx,
// ending CancelGrace (at most a quarter of the time left) before ctx's deadline
// when it has one.
func CutContext(ctx context.Context) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	grace := min(CancelGrace, time.Until(d)/4)
	return context.WithDeadline(ctx, d.Add(-grace))
}
