package terraform

import (
	"maps"
	"slices"
	"time"
)

// DefaultHeartbeat is how long a resource operation may go without a
// message about it before the adapter records a heartbeat of its own.
const DefaultHeartbeat = 30 * time.Second

// heartbeatSource is details.source of the adapter's own heartbeats.
const heartbeatSource = "adapter"

// startHeartbeat starts the adapter's own heartbeat, and returns the function
// that stops it and waits: an open resource operation about which nothing
// was read for the interval gets a terraform/ApplyProgress of the adapter's.
// The tool's own apply_progress is unreliable (opentofu#4107).
func (d *decoder) startHeartbeat() (stop func()) {
	every := d.cfg.heartbeat
	if every <= 0 {
		return func() {}
	}
	tick := time.NewTicker(max(every/4, 10*time.Millisecond))
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				d.locked(func() { d.beat(now, every) })
			}
		}
	}()
	return func() {
		tick.Stop()
		close(done)
		<-exited
	}
}

// beat records a heartbeat for each open operation not heard of since every.
func (d *decoder) beat(now time.Time, every time.Duration) {
	for _, addr := range slices.Sorted(maps.Keys(d.ops)) {
		if op := d.ops[addr]; now.Sub(op.heard) >= every {
			op.heard = now
			d.emit(op.ctx, TypeApplyProgress, 0, now, elapsedDetails{resourceFields: op.rf, Action: op.action,
				ElapsedSeconds: now.Sub(op.opened).Round(time.Second).Seconds(), Source: heartbeatSource})
		}
	}
}
