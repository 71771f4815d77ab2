package sdkparts

import (
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdklog "go.opentelemetry.io/otel/sdk/log"
)

func numbered(i int) sdklog.Record {
	var r sdklog.Record
	r.SetBody(attribute.StringValue(strconv.Itoa(i)))
	return r
}

// TestQueueGrowsAWrappedRing: a ring that grows while its records wrap
// round its end keeps them in order, and finish settles what is left as
// lost at shutdown and keeps none of it.
func TestQueueGrowsAWrappedRing(t *testing.T) {
	q := newQueue(16, 4, newLedger("test", metricnoop.NewMeterProvider()))
	for i := range 4 {
		q.push(numbered(i))
	}
	buf := make([]sdklog.Record, 16)
	if n, _ := q.take(buf[:2]); n != 2 {
		t.Fatalf("took %d, want 2", n)
	}
	q.settle(buf[:2], nil, false)
	for i := 4; i < 9; i++ { // 4 and 5 wrap round the ring's end, 6 makes it grow
		if _, accepted, overwrote := q.push(numbered(i)); !accepted || overwrote {
			t.Fatalf("push %d: accepted %v, overwrote %v", i, accepted, overwrote)
		}
	}
	if len(q.ring) != 8 {
		t.Fatalf("ring of %d, want 8", len(q.ring))
	}
	n, remaining := q.take(buf)
	var got []string
	for _, r := range buf[:n] {
		got = append(got, r.Body().AsString())
	}
	if want := "2 3 4 5 6 7 8"; remaining != 0 || strings.Join(got, " ") != want {
		t.Fatalf("took %q (%d left), want %q", strings.Join(got, " "), remaining, want)
	}

	q.push(numbered(9))
	q.push(numbered(10))
	if left := q.finish(); left != 7+2 { // the batch in flight and the two queued
		t.Fatalf("finish settled %d, want 9", left)
	}
	for i, r := range q.ring {
		if r.Body().Type() != attribute.EMPTY {
			t.Errorf("slot %d still holds %q after finish", i, r.Body().AsString())
		}
	}
	if q.finish() != 0 {
		t.Error("a second finish settled records again")
	}
}
