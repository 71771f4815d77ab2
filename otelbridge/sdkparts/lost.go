package sdkparts

import (
	"cmp"
	"fmt"
)

// LostRecordsError reports records a BatchProcessor could not deliver by
// the end of Shutdown.
type LostRecordsError struct {
	Exporter string
	// Unflushed records were Shutdown's to flush and were not exported:
	// their export during Shutdown failed, or they were still queued, or
	// being exported, when its context ended. By the time Shutdown
	// returns they are counted in the processor's DropStats, as
	// ExportFailed or Shutdown.
	Unflushed int64
	// Unreported records were lost earlier and no common/EventsDropped
	// event for them reached the exporter.
	Unreported int64
	// Cause is the context's error when the deadline passed, else the
	// first export error.
	Cause error
}

func (e *LostRecordsError) Error() string {
	s := fmt.Sprintf("sdkparts: %s: %d log records could not be flushed at shutdown", cmp.Or(e.Exporter, "exporter"), e.Unflushed)
	if e.Unreported > 0 {
		s += fmt.Sprintf(", and the loss of %d earlier records was never reported in the stream", e.Unreported)
	}
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns Cause, so errors.Is(err, context.DeadlineExceeded) works.
func (e *LostRecordsError) Unwrap() error { return e.Cause }
