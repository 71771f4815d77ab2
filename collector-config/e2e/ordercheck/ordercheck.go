// Package ordercheck is the consumer-side check that each run's progress
// events reached TNCO once, complete and in order.
//
// Every event of one run (trace) carries a sequence number, contiguous from
// 1 per trace (the message's "sequence"). Read in partition order, a
// sequence already seen is a duplicate, one below the highest seen and new
// is a reordering (by the difference), and one never seen below the highest
// is a gap. common/EventsDropped reports (details.count) are the losses the
// driver knew of. A run on more than one partition has no order a consumer
// can rely on. docs/collector.md ("Checking order and loss") writes the
// algorithm out for consumers in other languages.
package ordercheck

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Record is one Kafka record, in the order its partition holds it.
type Record struct {
	Topic     string
	Partition int32
	Value     []byte // the TNCO message (JSON)
}

// Range is a run of missing sequence numbers, From to To inclusive.
type Range struct{ From, To int64 }

// Run is what the check found for one run (trace) on one topic.
type Run struct {
	Topic   string
	TraceID string
	// Partitions the run's messages were on; more than one means no
	// consumer can order them.
	Partitions []int32
	Messages   int   // sequenced messages read, duplicates included
	Highest    int64 // the highest sequence seen
	Duplicates int   // messages whose sequence was already seen
	// Reordered counts messages that came after a higher sequence of the
	// same run; MaxDisplacement is the largest such difference.
	Reordered       int
	MaxDisplacement int64
	// Gaps are the sequences from 1 to Highest never seen, Missing their
	// number (a loss after the last one seen is no gap).
	Gaps    []Range
	Missing int64
	// ReportedLost sums the counts of the run's common/EventsDropped
	// reports.
	ReportedLost int64
}

// InOrder says whether the run was read once, complete up to its highest
// sequence, in order, from one partition.
func (r Run) InOrder() bool {
	return r.Duplicates == 0 && r.Reordered == 0 && r.Missing == 0 && len(r.Partitions) <= 1
}

func (r Run) String() string {
	s := fmt.Sprintf("%s %s: %d messages up to sequence %d", r.Topic, r.TraceID, r.Messages, r.Highest)
	if r.InOrder() {
		return s + ", in order"
	}
	if len(r.Partitions) > 1 {
		s += fmt.Sprintf(", on partitions %v", r.Partitions)
	}
	if r.Duplicates > 0 {
		s += fmt.Sprintf(", %d duplicates", r.Duplicates)
	}
	if r.Reordered > 0 {
		s += fmt.Sprintf(", %d reordered (by up to %d)", r.Reordered, r.MaxDisplacement)
	}
	if r.Missing > 0 {
		s += fmt.Sprintf(", %d missing in %d gaps", r.Missing, len(r.Gaps))
	}
	if r.ReportedLost > 0 {
		s += fmt.Sprintf(", %d reported lost", r.ReportedLost)
	}
	return s
}

// Checker reads records one at a time; Report says what it found. The
// zero value is ready to use. Not safe for concurrent use.
type Checker struct {
	runs map[runKey]*state
	// Unsequenced counts progress messages without a trace id or a
	// sequence (progress.WithoutSequence, or outside any trace).
	Unsequenced int
	// Invalid counts records that are not a JSON object.
	Invalid int
}

type runKey struct{ topic, trace string }

type state struct {
	run  Run
	seen map[int64]bool
	part map[int32]bool
}

// message is the part of the TNCO message the check reads.
type message struct {
	TraceID           string `json:"traceId"`
	Sequence          *int64 `json:"sequence"`
	ProgressEventType string `json:"progressEventType"`
	Details           struct {
		Count int64 `json:"count"`
	} `json:"details"`
}

// dropReport is progress.TypeEventsDropped, not imported: this package
// needs nothing but the message format.
const dropReport = "common/EventsDropped"

// Add reads one record.
func (c *Checker) Add(r Record) {
	var m message
	if err := json.Unmarshal(r.Value, &m); err != nil {
		c.Invalid++
		return
	}
	if m.TraceID == "" {
		c.Unsequenced++
		return
	}
	if c.runs == nil {
		c.runs = map[runKey]*state{}
	}
	k := runKey{r.Topic, m.TraceID}
	st := c.runs[k]
	if st == nil {
		st = &state{run: Run{Topic: r.Topic, TraceID: m.TraceID}, seen: map[int64]bool{}, part: map[int32]bool{}}
		c.runs[k] = st
	}
	st.part[r.Partition] = true
	if m.ProgressEventType == dropReport {
		st.run.ReportedLost += m.Details.Count
	}
	if m.Sequence == nil {
		if m.ProgressEventType != dropReport {
			c.Unsequenced++
		}
		return
	}
	s := *m.Sequence
	st.run.Messages++
	switch {
	case st.seen[s]:
		st.run.Duplicates++
	case s < st.run.Highest:
		st.run.Reordered++
		st.run.MaxDisplacement = max(st.run.MaxDisplacement, st.run.Highest-s)
	}
	st.seen[s] = true
	st.run.Highest = max(st.run.Highest, s)
}

// Report is the state of every run seen so far, sorted by topic and trace id.
type Report struct {
	Runs        []Run
	Unsequenced int
	Invalid     int
}

// Report computes the gaps and returns every run; Add may go on after it.
func (c *Checker) Report() Report {
	rep := Report{Unsequenced: c.Unsequenced, Invalid: c.Invalid}
	for _, st := range c.runs {
		r := st.run
		r.Gaps, r.Missing = nil, 0
		// The gaps lie between the sequences seen, sorted: the work is
		// bounded by the messages read, not by the highest sequence, which
		// a forged or corrupt message can put at 10^12.
		next := int64(1) // the lowest sequence not yet accounted for
		for _, s := range slices.Sorted(maps.Keys(st.seen)) {
			if s < next {
				continue // 0 or negative: no place in the run
			}
			if s > next {
				r.Gaps = append(r.Gaps, Range{next, s - 1})
				r.Missing += s - next
			}
			next = s + 1
		}
		r.Partitions = slices.Sorted(maps.Keys(st.part))
		rep.Runs = append(rep.Runs, r)
	}
	slices.SortFunc(rep.Runs, func(a, b Run) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), strings.Compare(a.TraceID, b.TraceID))
	})
	return rep
}

// Totals sums a report over its runs.
type Totals struct {
	Runs, InOrder, Messages, Duplicates, Reordered, SplitRuns int
	Missing, ReportedLost, MaxDisplacement                    int64
}

// Totals sums the report.
func (r Report) Totals() Totals {
	var t Totals
	for _, run := range r.Runs {
		t.Runs++
		if run.InOrder() {
			t.InOrder++
		}
		if len(run.Partitions) > 1 {
			t.SplitRuns++
		}
		t.Messages += run.Messages
		t.Duplicates += run.Duplicates
		t.Reordered += run.Reordered
		t.Missing += run.Missing
		t.ReportedLost += run.ReportedLost
		t.MaxDisplacement = max(t.MaxDisplacement, run.MaxDisplacement)
	}
	return t
}

func (t Totals) String() string {
	return fmt.Sprintf("%d runs, %d in order; %d messages, %d duplicates, %d reordered (by up to %d), %d missing, %d reported lost, %d runs on several partitions",
		t.Runs, t.InOrder, t.Messages, t.Duplicates, t.Reordered, t.MaxDisplacement, t.Missing, t.ReportedLost, t.SplitRuns)
}

// String is one line per run that is not in order, then the totals.
func (r Report) String() string {
	var b strings.Builder
	for _, run := range r.Runs {
		if !run.InOrder() {
			b.WriteString(run.String())
			b.WriteByte('\n')
		}
	}
	fmt.Fprintf(&b, "%s; %d unsequenced, %d invalid", r.Totals(), r.Unsequenced, r.Invalid)
	return b.String()
}
