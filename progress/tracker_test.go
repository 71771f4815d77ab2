package progress_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/progress/wire"
)

func trCond(status, reason, message string) progress.Condition {
	return progress.Condition{Status: status, Reason: reason, Message: message}
}

func trOn(res progress.Resource, stream string, c progress.Condition) progress.Transition {
	return progress.Transition{Stream: stream, Condition: c, Envelope: progress.Envelope{Resource: res}}
}

// trDecoded returns the transitions captured by sink, decoded, in order.
func trDecoded(t testing.TB, sink *progresstest.Sink) []wire.Decoded {
	t.Helper()
	recs := sink.Records()
	out := make([]wire.Decoded, len(recs))
	for i := range recs {
		out[i] = trDecode(t, &recs[i])
	}
	return out
}

func prevOf(d wire.Decoded) string {
	if d.Transition.Previous == nil {
		return "<none>"
	}
	p := d.Transition.Previous
	return p.Status + "/" + p.Reason + "/" + p.Message
}

func mustObserve(t testing.TB, tk *progress.Tracker, tr progress.Transition, want bool) {
	t.Helper()
	got, err := tk.Observe(context.Background(), tr)
	if err != nil {
		t.Fatalf("Observe(%s %+v): %v", tr.Stream, tr.Condition, err)
	}
	if got != want {
		t.Fatalf("Observe(%s %+v) emitted = %v, want %v", tr.Stream, tr.Condition, got, want)
	}
}

var resA = progress.Resource{Type: "ComputeCluster", Namespace: "org-acme", ID: "cluster-a"}

func TestTrackerEdgeTriggers(t *testing.T) {
	rec, sink := newTrRecorder(t)
	tk := progress.NewTracker(rec)
	P := progress.StreamProvisioning
	steps := []struct {
		c    progress.Condition
		emit bool
	}{
		{trCond("False", "Provisioning", "creating the network"), true},
		{trCond("False", "Provisioning", "creating the network"), false}, // a repeat (the next poll)
		{trCond("False", "Provisioning", "creating the servers"), true},  // message only
		{trCond("False", "Provisioning", "creating the servers"), false},
		{trCond("True", "Provisioning", "creating the servers"), true},  // status only
		{trCond("True", "Provisioned", "creating the servers"), true},   // reason only
		{trCond("True", "Provisioned", ""), true},                       // message cleared
		{trCond("False", "Provisioning", "creating the network"), true}, // back to an earlier state
		{trCond("False", "Provisioning", "creating the network"), false},
	}
	for _, s := range steps {
		mustObserve(t, tk, trOn(resA, P, s.c), s.emit)
	}

	got := trDecoded(t, sink)
	var want []progress.Condition
	for _, s := range steps {
		if s.emit {
			want = append(want, s.c)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Transition.Condition != want[i] {
			t.Errorf("record %d: %+v, want %+v (messages are never rewritten)", i, got[i].Transition.Condition, want[i])
		}
		wantPrev := "<none>"
		if i > 0 {
			wantPrev = want[i-1].Status + "/" + want[i-1].Reason + "/" + want[i-1].Message
		}
		if p := prevOf(got[i]); p != wantPrev {
			t.Errorf("record %d: previous %s, want %s", i, p, wantPrev)
		}
		if got[i].Resource != resA {
			t.Errorf("record %d: resource %+v", i, got[i].Resource)
		}
	}
	st := tk.Stats()
	if st.Emitted != int64(len(want)) || st.Suppressed != int64(len(steps)-len(want)) || st.Tracked != 1 {
		t.Errorf("Stats = %+v", st)
	}
}

func TestTrackerKeysByResourceAndStream(t *testing.T) {
	rec, sink := newTrRecorder(t)
	tk := progress.NewTracker(rec)
	resOtherNS := resA
	resOtherNS.Namespace = "org-other"
	resOtherType := resA
	resOtherType.Type = "KubernetesCluster"
	c := trCond("True", "Running", "")

	mustObserve(t, tk, trOn(resA, progress.StreamLifecycle, c), true)
	mustObserve(t, tk, trOn(resA, progress.StreamProvisioning, c), true) // another stream
	mustObserve(t, tk, trOn(resA, "health", c), true)
	mustObserve(t, tk, trOn(resOtherNS, progress.StreamLifecycle, c), true) // same name, other namespace
	mustObserve(t, tk, trOn(resOtherType, progress.StreamLifecycle, c), true)
	for _, s := range []string{progress.StreamLifecycle, progress.StreamProvisioning, "health"} {
		mustObserve(t, tk, trOn(resA, s, c), false)
	}
	// The envelope other than the key does not matter: a new generation
	// with the same condition is not a transition.
	tr := trOn(resA, progress.StreamLifecycle, c)
	tr.ObservedGeneration = 9
	mustObserve(t, tk, tr, false)

	if n := len(sink.Records()); n != 5 {
		t.Errorf("%d records, want 5", n)
	}
	if tk.Len() != 3 {
		t.Errorf("Len = %d, want 3 resources", tk.Len())
	}
}

func TestTrackerOverridesCallerPrevious(t *testing.T) {
	rec, sink := newTrRecorder(t)
	tk := progress.NewTracker(rec)
	tr := trOn(resA, progress.StreamLifecycle, trCond("True", "Running", ""))
	tr.Previous = &progress.Condition{Status: "made", Reason: "up"}
	mustObserve(t, tk, tr, true)
	if p := prevOf(trDecoded(t, sink)[0]); p != "<none>" {
		t.Errorf("previous = %s, want none: the Tracker knew nothing", p)
	}
}

func TestTrackerEvictsLeastRecentlyUsed(t *testing.T) {
	rec, sink := newTrRecorder(t)
	tk := progress.NewTracker(rec, progress.WithCapacity(2))
	r := func(id string) progress.Resource { return progress.Resource{Type: "Widget", ID: id} }
	running := trCond("True", "Running", "")

	mustObserve(t, tk, trOn(r("a"), progress.StreamLifecycle, running), true)
	mustObserve(t, tk, trOn(r("a"), progress.StreamProvisioning, running), true)
	mustObserve(t, tk, trOn(r("b"), progress.StreamLifecycle, running), true)
	// An unchanged observation counts as use: "a" becomes the most recent.
	mustObserve(t, tk, trOn(r("a"), progress.StreamLifecycle, running), false)
	mustObserve(t, tk, trOn(r("c"), progress.StreamLifecycle, running), true) // evicts "b"

	if tk.Len() != 2 {
		t.Fatalf("Len = %d, want the capacity 2", tk.Len())
	}
	if ev := tk.Stats().Evicted; ev != 1 {
		t.Errorf("Evicted = %d, want 1", ev)
	}
	// "a" is still known on both streams.
	mustObserve(t, tk, trOn(r("a"), progress.StreamLifecycle, running), false)
	mustObserve(t, tk, trOn(r("a"), progress.StreamProvisioning, running), false)
	// "b" was evicted: the same condition is emitted again, with no known
	// previous state.
	sink.Reset()
	mustObserve(t, tk, trOn(r("b"), progress.StreamLifecycle, running), true)
	got := trDecoded(t, sink)
	if len(got) != 1 || got[0].Resource.ID != "b" || got[0].Transition.Previous != nil {
		t.Fatalf("after eviction got %+v", got)
	}
	// ...and that evicted "c", the least recent now.
	mustObserve(t, tk, trOn(r("a"), progress.StreamLifecycle, running), false)
	mustObserve(t, tk, trOn(r("c"), progress.StreamLifecycle, running), true)
}

func TestTrackerForget(t *testing.T) {
	rec, sink := newTrRecorder(t)
	tk := progress.NewTracker(rec)
	other := progress.Resource{Type: "Widget", ID: "other"}
	mustObserve(t, tk, trOn(resA, progress.StreamLifecycle, trCond("True", "Running", "")), true)
	mustObserve(t, tk, trOn(resA, progress.StreamProvisioning, trCond("True", "Provisioned", "")), true)
	mustObserve(t, tk, trOn(other, progress.StreamLifecycle, trCond("True", "Running", "")), true)

	// UID is not part of the match: Forget with what a delete event has.
	forget := resA
	forget.UID = "whatever"
	tk.Forget(forget)
	tk.Forget(progress.Resource{Type: "Widget", ID: "never-seen"})
	if tk.Len() != 1 {
		t.Fatalf("Len = %d after Forget, want 1", tk.Len())
	}
	mustObserve(t, tk, trOn(other, progress.StreamLifecycle, trCond("True", "Running", "")), false)

	sink.Reset()
	mustObserve(t, tk, trOn(resA, progress.StreamLifecycle, trCond("True", "Running", "")), true)
	mustObserve(t, tk, trOn(resA, progress.StreamProvisioning, trCond("False", "Deprovisioning", "")), true)
	for _, d := range trDecoded(t, sink) {
		if d.Transition.Previous != nil {
			t.Errorf("%s after Forget: previous %s, want none", d.Transition.Stream, prevOf(d))
		}
	}
}

func TestTrackerRecreatedObjectByUID(t *testing.T) {
	rec, sink := newTrRecorder(t)
	tk := progress.NewTracker(rec)
	v1 := resA
	v1.UID = "uid-1"
	v2 := resA
	v2.UID = "uid-2"
	c := trCond("True", "Provisioned", "")
	mustObserve(t, tk, trOn(resA, progress.StreamProvisioning, c), true) // UID unknown yet
	mustObserve(t, tk, trOn(v1, progress.StreamProvisioning, c), false)  // learns uid-1
	mustObserve(t, tk, trOn(v2, progress.StreamProvisioning, c), true)   // deleted and re-created
	mustObserve(t, tk, trOn(v2, progress.StreamProvisioning, c), false)
	got := trDecoded(t, sink)
	if len(got) != 2 || got[1].Transition.Previous != nil || got[1].Resource.UID != "uid-2" {
		t.Fatalf("got %+v", got)
	}
}

func TestTrackerInvalidTransition(t *testing.T) {
	rec, sink := newTrRecorder(t)
	tk := progress.NewTracker(rec)
	for _, tr := range []progress.Transition{
		trOn(resA, "Not A Stream", trCond("True", "Running", "")),
		trOn(resA, progress.StreamLifecycle, trCond("", "Running", "")),
	} {
		emitted, err := tk.Observe(context.Background(), tr)
		if emitted || !errors.Is(err, progress.ErrInvalidEvent) {
			t.Errorf("Observe(%q, %+v) = %v, %v; want false, ErrInvalidEvent", tr.Stream, tr.Condition, emitted, err)
		}
	}
	if tk.Len() != 0 || len(sink.Records()) != 0 || rec.Stats().Invalid != 2 {
		t.Errorf("Len %d, records %d, invalid %d", tk.Len(), len(sink.Records()), rec.Stats().Invalid)
	}
	// An invalid observation leaves a known stream as it was.
	mustObserve(t, tk, trOn(resA, progress.StreamLifecycle, trCond("True", "Running", "")), true)
	if _, err := tk.Observe(context.Background(), trOn(resA, progress.StreamLifecycle, trCond("", "", "x"))); err == nil {
		t.Fatal("empty status accepted")
	}
	mustObserve(t, tk, trOn(resA, progress.StreamLifecycle, trCond("True", "Running", "")), false)
}

func TestTrackerNilRecorderUsesDefault(t *testing.T) {
	rec, sink := newTrRecorder(t)
	prev := progress.Default()
	t.Cleanup(func() { progress.SetDefault(prev) })
	tk := progress.NewTracker(nil)
	progress.SetDefault(rec) // after NewTracker: the Default of the moment is used
	mustObserve(t, tk, trOn(resA, progress.StreamLifecycle, trCond("True", "Running", "")), true)
	if len(sink.Records()) != 1 {
		t.Error("the Default Recorder did not receive the transition")
	}
}

func TestObserveUnchangedAllocatesNothing(t *testing.T) {
	rec, _ := newTrRecorder(t)
	tk := progress.NewTracker(rec)
	tr := trOn(resA, progress.StreamLifecycle, trCond("True", "Running", "the server is running"))
	tr.Resource.UID = "uid-1"
	tr.Scope = map[string]string{"organization": "acme"}
	mustObserve(t, tk, tr, true)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, func() {
		if emitted, _ := tk.Observe(ctx, tr); emitted {
			t.Fatal("emitted an unchanged transition")
		}
	})
	if allocs != 0 {
		t.Errorf("unchanged Observe allocates %v times, want 0", allocs)
	}
}

// TestTrackerConcurrent runs many reconcilers at once (run with -race):
// each owns its resources, and all of them also hammer one shared resource
// with the same condition while others Forget and read Len.
func TestTrackerConcurrent(t *testing.T) {
	rec, sink := newTrRecorder(t)
	tk := progress.NewTracker(rec)
	const workers, perWorker = 16, 20
	seq := []progress.Condition{
		trCond("False", "Pending", ""), trCond("False", "Pending", ""),
		trCond("True", "Running", ""), trCond("True", "Running", ""),
		trCond("True", "Running", "2 of 2 servers"), // message only
		trCond("False", "Stopped", ""), trCond("False", "Stopped", ""),
	}
	const emitsPerKey = 4 // Pending, Running, Running+message, Stopped
	shared := progress.Resource{Type: "Widget", ID: "shared"}

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ctx := context.Background()
			for i := range perWorker {
				res := progress.Resource{Type: "Widget", Namespace: fmt.Sprint("ns-", w), ID: fmt.Sprint("w-", i)}
				for _, c := range seq {
					for _, s := range []string{progress.StreamLifecycle, progress.StreamProvisioning} {
						if _, err := tk.Observe(ctx, trOn(res, s, c)); err != nil {
							t.Error(err)
						}
					}
					if _, err := tk.Observe(ctx, trOn(shared, "health", trCond("True", "Healthy", ""))); err != nil {
						t.Error(err)
					}
				}
				tk.Forget(progress.Resource{Type: "Gone", ID: fmt.Sprint(i)})
				_ = tk.Len()
			}
		})
	}
	wg.Wait()

	type key struct{ ns, id, stream string }
	chains := map[key][]wire.Decoded{}
	for _, d := range trDecoded(t, sink) {
		k := key{d.Resource.Namespace, d.Resource.ID, d.Transition.Stream}
		chains[k] = append(chains[k], d)
	}
	if got := chains[key{"", "shared", "health"}]; len(got) != 1 {
		t.Errorf("shared resource emitted %d times, want once", len(got))
	}
	if want := workers*perWorker*2 + 1; len(chains) != want {
		t.Errorf("%d keys emitted, want %d", len(chains), want)
	}
	for k, ds := range chains {
		if k.id == "shared" {
			continue
		}
		if len(ds) != emitsPerKey {
			t.Errorf("%v: %d transitions, want %d", k, len(ds), emitsPerKey)
			continue
		}
		// Within a key the order is the reconciler's, and each record
		// names the one before it as its previous state.
		for i, d := range ds {
			want := "<none>"
			if i > 0 {
				p := ds[i-1].Transition.Condition
				want = p.Status + "/" + p.Reason + "/" + p.Message
			}
			if got := prevOf(d); got != want {
				t.Errorf("%v record %d: previous %s, want %s", k, i, got, want)
			}
		}
	}
	if st := tk.Stats(); st.Emitted != int64(len(sink.Records())) || st.Tracked != workers*perWorker+1 {
		t.Errorf("Stats %+v, records %d", st, len(sink.Records()))
	}
}

// TestTrackerConcurrentEviction keeps the working set above the capacity
// while many goroutines observe: memory stays bounded and every record's
// previous state is either unknown or one that key really had.
func TestTrackerConcurrentEviction(t *testing.T) {
	rec, sink := newTrRecorder(t)
	const capacity = 8
	tk := progress.NewTracker(rec, progress.WithCapacity(capacity))
	states := []progress.Condition{trCond("False", "Pending", ""), trCond("True", "Running", ""), trCond("False", "Stopped", "")}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 300 {
				res := progress.Resource{Type: "Widget", ID: fmt.Sprint("r-", (i*7+w)%32)}
				if _, err := tk.Observe(context.Background(), trOn(res, progress.StreamLifecycle, states[(i+w)%3])); err != nil {
					t.Error(err)
				}
				if n := tk.Len(); n > capacity {
					t.Errorf("Len %d above capacity %d", n, capacity)
				}
			}
		})
	}
	wg.Wait()
	valid := map[progress.Condition]bool{}
	for _, s := range states {
		valid[s] = true
	}
	for _, d := range trDecoded(t, sink) {
		if p := d.Transition.Previous; p != nil && (!valid[*p] || *p == d.Transition.Condition) {
			t.Errorf("%s: previous %+v for %+v", d.Resource.ID, *p, d.Transition.Condition)
		}
	}
	if st := tk.Stats(); st.Evicted == 0 || st.Tracked != capacity {
		t.Errorf("Stats %+v: want evictions and a full Tracker", st)
	}
}

// TestRecordIfChangedCompares: any of status, reason and message makes a
// change.
func TestRecordIfChangedCompares(t *testing.T) {
	rec, _ := newTrRecorder(t)
	base := trCond("True", "Provisioned", "ready")
	for _, tc := range []struct {
		next progress.Condition
		want bool
	}{
		{base, false},
		{trCond("False", "Provisioned", "ready"), true},
		{trCond("True", "Provisioning", "ready"), true},
		{trCond("True", "Provisioned", "ready again"), true}, // message only
	} {
		got, err := rec.RecordIfChanged(context.Background(), base, trOn(progress.Resource{Type: "Widget", ID: "w"}, progress.StreamLifecycle, tc.next))
		if got != tc.want || err != nil {
			t.Errorf("RecordIfChanged(%+v, %+v) = %v, %v; want %v", base, tc.next, got, err, tc.want)
		}
	}
}

func TestRecordIfChanged(t *testing.T) {
	rec, sink := newTrRecorder(t)
	ctx := context.Background()
	tr := trOn(resA, progress.StreamProvisioning, trCond("False", "Provisioning", "creating"))
	tr.Previous = &progress.Condition{Status: "stale"} // replaced: prior is the truth

	// No prior condition on the object: the first transition.
	if ok, err := rec.RecordIfChanged(ctx, progress.Condition{}, tr); !ok || err != nil {
		t.Fatalf("first: %v, %v", ok, err)
	}
	// The object already says so: nothing to emit.
	if ok, err := rec.RecordIfChanged(ctx, tr.Condition, tr); ok || err != nil {
		t.Fatalf("unchanged: %v, %v", ok, err)
	}
	prior := tr.Condition
	tr.Message = "creating the servers"
	if ok, err := rec.RecordIfChanged(ctx, prior, tr); !ok || err != nil {
		t.Fatalf("message only: %v, %v", ok, err)
	}
	if _, err := rec.RecordIfChanged(ctx, prior, trOn(resA, "Bad", trCond("True", "x", ""))); !errors.Is(err, progress.ErrInvalidEvent) {
		t.Errorf("invalid stream: %v", err)
	}

	got := trDecoded(t, sink)
	if len(got) != 2 {
		t.Fatalf("%d records, want 2", len(got))
	}
	if p := prevOf(got[0]); p != "<none>" {
		t.Errorf("first: previous %s", p)
	}
	if p := prevOf(got[1]); p != "False/Provisioning/creating" {
		t.Errorf("second: previous %s", p)
	}
	if got[1].Transition.Message != "creating the servers" {
		t.Errorf("second: message %q", got[1].Transition.Message)
	}
}

// blockingProcessor blocks OnEmit for records of one resource until
// released, as a stuck exporter behind a SimpleProcessor would.
type blockingProcessor struct {
	trDiscard
	id      string
	entered chan struct{}
	release chan struct{}
}

func (p *blockingProcessor) OnEmit(_ context.Context, r *sdklog.Record) error {
	d, err := wire.Decode(r)
	if err == nil && d.Resource.ID == p.id {
		close(p.entered)
		<-p.release
	}
	return nil
}

// TestTrackerDoesNotEmitUnderLock: while one reconciler's emission is
// stuck in the SDK, others still observe and emit. If Observe held its lock
// while emitting, this test would deadlock (and fail on the test timeout).
func TestTrackerDoesNotEmitUnderLock(t *testing.T) {
	p := &blockingProcessor{id: "stuck", entered: make(chan struct{}), release: make(chan struct{})}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(p))
	t.Cleanup(func() { _ = lp.Shutdown(context.Background()) })
	tk := progress.NewTracker(progress.NewRecorder(progress.WithLoggerProvider(lp)))
	other := progress.Resource{Type: "Widget", ID: "other"}
	mustObserve(t, tk, trOn(other, progress.StreamLifecycle, trCond("True", "Running", "")), true)

	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = tk.Observe(context.Background(), trOn(progress.Resource{Type: "Widget", ID: "stuck"}, progress.StreamLifecycle, trCond("True", "Running", "")))
	}()
	<-p.entered
	mustObserve(t, tk, trOn(other, progress.StreamLifecycle, trCond("True", "Running", "")), false)
	mustObserve(t, tk, trOn(other, progress.StreamLifecycle, trCond("False", "Stopped", "")), true)
	if tk.Len() != 2 {
		t.Errorf("Len = %d", tk.Len())
	}
	close(p.release)
	<-done
}
