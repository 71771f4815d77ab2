package sdkparts

import (
	"sync"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// queue holds the records of a BatchProcessor from OnEmit until they are
// settled (exported, or lost with a reason). Every change of state that
// settles records writes them in the ledger under the queue's lock, so the
// queue and the ledger always agree: Shutdown's count is exact.
type queue struct {
	ledger *ledger

	mu       sync.Mutex
	ring     []sdklog.Record // grows up to max
	head, n  int
	max      int
	inflight int  // records taken and not yet settled
	closed   bool // no more records are accepted
	finished bool // everything left was settled as lost: the worker's results no longer count

	// What Shutdown could not flush: records taken after close whose
	// export failed, and records lost at shutdown (by finish, or in an
	// export its deadline cut).
	takenClosed         bool // the batch in flight was taken after close
	failedClosed, atEnd int64
}

func newQueue(max, initial int, l *ledger) *queue {
	return &queue{ledger: l, max: max, ring: make([]sdklog.Record, min(max, initial))}
}

// push queues r, overwriting the oldest record when full (as the SDK does:
// the newest progress is the most useful) and writing that one down as
// lost. It returns the queue length, whether r was accepted (false once
// closed: r is lost at shutdown), and whether a record was overwritten.
func (q *queue) push(r sdklog.Record) (n int, accepted, overwrote bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		q.ledger.add(DropShutdown, 1)
		return q.n, false, false
	}
	if q.n == len(q.ring) && len(q.ring) < q.max {
		q.grow()
	}
	if q.n == len(q.ring) {
		q.ledger.lose(&q.ring[q.head], DropQueueFull, time.Now())
		q.ring[q.head] = r
		q.head = (q.head + 1) % len(q.ring)
		return q.n, true, true
	}
	q.ring[(q.head+q.n)%len(q.ring)] = r
	q.n++
	return q.n, true, false
}

// grow doubles the full ring up to max; the caller holds mu.
func (q *queue) grow() {
	next := make([]sdklog.Record, min(2*len(q.ring), q.max))
	n := copy(next, q.ring[q.head:])
	copy(next[n:], q.ring[:q.head])
	q.ring, q.head = next, 0
}

// take moves up to len(buf) records into buf, in order; they are in flight
// until settle. It returns how many it took and how many remain queued.
func (q *queue) take(buf []sdklog.Record) (n, remaining int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.finished {
		return 0, 0
	}
	n = min(len(buf), q.n)
	for i := 0; i < n; i++ {
		buf[i] = q.ring[q.head]
		q.ring[q.head] = sdklog.Record{}
		q.head = (q.head + 1) % len(q.ring)
	}
	q.n -= n
	q.inflight = n
	q.takenClosed = q.closed
	return n, q.n
}

// settle writes down the outcome of the batch in flight: exported when err
// is nil; else lost at shutdown when Shutdown's deadline cut the export
// (cut), or lost with DropExportFailed. It returns the reason the batch
// was lost ("" when exported), and false, writing nothing, when finish has
// already counted the batch as lost.
func (q *queue) settle(batch []sdklog.Record, err error, cut bool) (reason string, settled bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.finished {
		return "", false
	}
	q.inflight = 0
	switch {
	case err == nil:
		q.ledger.exported.Add(int64(len(batch)))
		return "", true
	case cut:
		// As finish would have: the export did not fail, Shutdown's
		// deadline ended it, whichever of the two got here first.
		q.ledger.add(DropShutdown, int64(len(batch)))
		q.atEnd += int64(len(batch))
		return DropShutdown, true
	}
	now := time.Now()
	for i := range batch {
		q.ledger.lose(&batch[i], DropExportFailed, now)
	}
	if q.takenClosed {
		q.failedClosed += int64(len(batch))
	}
	return DropExportFailed, true
}

// close stops accepting records: they are counted as lost at shutdown.
func (q *queue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
}

// shutdownLoss returns what Shutdown could not flush: the records whose
// export failed after close (they also wait for a report that will not
// come), and those finish settled as lost.
func (q *queue) shutdownLoss() (failed, atEnd int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.failedClosed, q.atEnd
}

// finish writes every record still queued or in flight down as lost at
// shutdown and empties the queue; a later settle of the batch in flight
// counts nothing. It returns how many records it wrote down; a second call
// returns 0.
func (q *queue) finish() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	if q.finished {
		return 0
	}
	q.finished = true
	left := int64(q.n + q.inflight)
	clear(q.ring) // the slots of taken records are already zero
	q.n, q.inflight = 0, 0
	q.atEnd += left
	q.ledger.add(DropShutdown, left)
	return left
}

// len returns how many records are queued.
func (q *queue) len() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return int64(q.n)
}
