package progress

import (
	"context"
	"sync/atomic"
)

var defaultRecorder atomic.Pointer[Recorder]

// Default returns the Recorder used by the package-level functions. It
// emits through the global LoggerProvider.
func Default() *Recorder {
	if r := defaultRecorder.Load(); r != nil {
		return r
	}
	// A Recorder that loses the race to a concurrent Default or
	// SetDefault is dropped: it holds nothing that needs closing.
	defaultRecorder.CompareAndSwap(nil, NewRecorder())
	return defaultRecorder.Load()
}

// SetDefault replaces the Recorder used by the package-level functions,
// e.g. to change its redaction. A nil r restores a fresh default.
func SetDefault(r *Recorder) {
	if r == nil {
		r = NewRecorder()
	}
	defaultRecorder.Store(r)
}

// Record emits evt through the Default Recorder. See Recorder.Record.
func Record(ctx context.Context, evt Event) error { return Default().Record(ctx, evt) }

// RecordTransition emits t through the Default Recorder.
func RecordTransition(ctx context.Context, t Transition) error {
	return Default().RecordTransition(ctx, t)
}

// RecordIfChanged calls RecordIfChanged on the Default Recorder.
func RecordIfChanged(ctx context.Context, prior Condition, t Transition) (bool, error) {
	return Default().RecordIfChanged(ctx, prior, t)
}
