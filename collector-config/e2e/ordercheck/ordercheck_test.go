package ordercheck_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/progressotel/progressotel/collector-config/e2e/ordercheck"
)

func msg(trace string, seq int) []byte {
	return fmt.Appendf(nil, `{"eventType":"ResourceTransitionProgressEvent","progressEventType":"ansible/TaskStarted","traceId":%q,"sequence":%d}`, trace, seq)
}

func feed(c *ordercheck.Checker, topic string, part int32, trace string, seqs ...int) {
	for _, s := range seqs {
		c.Add(ordercheck.Record{Topic: topic, Partition: part, Value: msg(trace, s)})
	}
}

// Each kind of damage is reported for the run it happened to, and only
// there: the check tells a consumer what it would otherwise get wrong.
func TestCheckerReportsEachRun(t *testing.T) {
	var c ordercheck.Checker
	feed(&c, "t", 0, "a", 1, 2, 3, 4)    // in order
	feed(&c, "t", 1, "b", 1, 2, 2, 3)    // a duplicate
	feed(&c, "t", 0, "c", 1, 4, 2, 3, 5) // 2 and 3 late, by 2 and 1
	feed(&c, "t", 1, "d", 1, 2, 5, 6, 9) // gaps 3-4 and 7-8
	feed(&c, "t", 0, "e", 1, 2)          // split over two partitions
	feed(&c, "t", 2, "e", 3)             //
	feed(&c, "u", 0, "a", 2, 1)          // same trace on another topic: its own run
	c.Add(ordercheck.Record{Topic: "t", Partition: 1, Value: []byte(`{"progressEventType":"common/EventsDropped","traceId":"d","details":{"count":2}}`)})
	c.Add(ordercheck.Record{Topic: "t", Value: []byte(`{"progressEventType":"x"}`)}) // no trace
	c.Add(ordercheck.Record{Topic: "t", Value: []byte(`not json`)})

	rep := c.Report()
	got := map[string]ordercheck.Run{}
	for _, r := range rep.Runs {
		got[r.Topic+"/"+r.TraceID] = r
	}
	if len(got) != 6 {
		t.Fatalf("%d runs, want 6: %v", len(got), rep)
	}
	if r := got["t/a"]; !r.InOrder() || r.Highest != 4 || r.Messages != 4 {
		t.Errorf("a: %v", r)
	}
	if r := got["t/b"]; r.InOrder() || r.Duplicates != 1 || r.Reordered != 0 || r.Missing != 0 {
		t.Errorf("b: %v", r)
	}
	if r := got["t/c"]; r.Reordered != 2 || r.MaxDisplacement != 2 || r.Missing != 0 || r.Duplicates != 0 {
		t.Errorf("c: %v", r)
	}
	if r := got["t/d"]; r.Missing != 4 || !reflect.DeepEqual(r.Gaps, []ordercheck.Range{{3, 4}, {7, 8}}) || r.ReportedLost != 2 || r.Reordered != 0 {
		t.Errorf("d: %v (gaps %v)", r, r.Gaps)
	}
	if r := got["t/e"]; r.InOrder() || !reflect.DeepEqual(r.Partitions, []int32{0, 2}) {
		t.Errorf("e: %v", r)
	}
	if r := got["u/a"]; r.Reordered != 1 || r.MaxDisplacement != 1 {
		t.Errorf("u/a: %v", r)
	}
	if rep.Unsequenced != 1 || rep.Invalid != 1 {
		t.Errorf("unsequenced %d, invalid %d, want 1 and 1", rep.Unsequenced, rep.Invalid)
	}
	tot := rep.Totals()
	if tot.Runs != 6 || tot.InOrder != 1 || tot.Duplicates != 1 || tot.Missing != 4 || tot.SplitRuns != 1 {
		t.Errorf("totals: %v", tot)
	}
	// A late message fills its gap: the report is of what was read so far.
	feed(&c, "t", 1, "d", 3, 4, 7, 8)
	if r := findRun(c.Report(), "t", "d"); r.Missing != 0 || r.Reordered != 4 {
		t.Errorf("d after the late messages: %v", r)
	}
}

func findRun(rep ordercheck.Report, topic, trace string) ordercheck.Run {
	for _, r := range rep.Runs {
		if r.Topic == topic && r.TraceID == trace {
			return r
		}
	}
	return ordercheck.Run{}
}

func ExampleChecker() {
	var c ordercheck.Checker
	for _, s := range []int{1, 2, 4, 3, 3} {
		c.Add(ordercheck.Record{Topic: "progress_events_tenant-a", Value: fmt.Appendf(nil, `{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","sequence":%d}`, s)})
	}
	fmt.Println(c.Report().Runs[0])
	// Output: progress_events_tenant-a 4bf92f3577b34da6a3ce929d0e0e4736: 5 messages up to sequence 4, 1 duplicates, 1 reordered (by up to 1)
}

// A sequence that jumps to 10^12 (forged, or corrupt) is one gap, found
// with work bounded by the messages read: walking every number up to the
// highest took hours.
func TestCheckerSequenceJump(t *testing.T) {
	const far = 1_000_000_000_000
	var c ordercheck.Checker
	feed(&c, "t", 0, "a", 1, 2, far, 3, 0, -5)
	done := make(chan ordercheck.Report, 1)
	go func() { done <- c.Report() }()
	var rep ordercheck.Report
	select {
	case rep = <-done:
	case <-time.After(time.Minute): // only detects the walk: the bounded report takes microseconds
		t.Fatal("Report did not return within a minute for a run of 6 messages")
	}
	r := findRun(rep, "t", "a")
	if r.Highest != far || r.Missing != far-4 || !reflect.DeepEqual(r.Gaps, []ordercheck.Range{{4, far - 1}}) || r.Reordered != 3 {
		t.Errorf("run: %v (gaps %v)", r, r.Gaps)
	}
}
