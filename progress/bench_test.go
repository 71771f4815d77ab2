//go:build unix

package progress_test

// The Record benchmarks measure progress.Record against the physical limit:
// a hand-built log.Record with the same attributes, emitted to the same SDK
// logger. Every variant of one size goes to an SDK LoggerProvider with the
// SDK's BatchProcessor (the production default) and an exporter that drops
// the batches, so the ratios in one run compare like with like.
//
// Fairness rules (TestBenchVariantsEquivalent checks the first three):
//   - baseline and progress carry the same attributes: same keys, value
//     types and values, including progress.event_type and progress.sequence,
//     the same EventName, Severity and SeverityText;
//   - both take a fresh time.Now() per record (the event's Time is zero);
//   - the baseline builds its attributes per call from the typed event with
//     precomputed keys, as a hand-written emitter would; slice values are
//     built per call because they are the event's data;
//   - the inputs each API takes (the details map, the details struct, the
//     slog attrs) are built once, outside the loop, for every variant;
//   - all variants use the same ctx, which carries a sampled span context.
//
// Besides ns/op (wall clock) every benchmark reports cpu-ns/op: the
// process's CPU time (getrusage: user + system, all threads, so the batch
// processor's goroutine and the GC are included) per op. On a shared
// machine wall time also counts the time other processes held the CPU;
// CPU time does not, so its ratios are the steadier ones.

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/log/embedded"
	"go.opentelemetry.io/otel/log/noop"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/testkit/hostile"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/progresstest"
	"github.com/progressotel/progressotel/progress/wire"
)

// benchDiscard is the exporter of the benchmark provider: it drops every
// batch, so only the driver-side cost is measured.
type benchDiscard struct{}

func (benchDiscard) Export(context.Context, []sdklog.Record) error { return nil }
func (benchDiscard) Shutdown(context.Context) error                { return nil }
func (benchDiscard) ForceFlush(context.Context) error              { return nil }

// newBenchProvider is the production set-up: BatchProcessor, defaults.
func newBenchProvider(tb testing.TB) *sdklog.LoggerProvider {
	tb.Helper()
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(benchDiscard{})))
	tb.Cleanup(func() { _ = lp.Shutdown(context.Background()) })
	return lp
}

// cpuNow is the CPU time the process has used so far.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loop runs op in a b.Loop and reports allocations and cpu-ns/op.
func loop(b *testing.B, op func()) {
	b.ReportAllocs()
	start := cpuNow()
	for b.Loop() {
		op()
	}
	b.ReportMetric(float64(cpuNow()-start)/float64(b.N), "cpu-ns/op")
}

// benchCtx carries a sampled span, as a driver's ctx does inside an
// operation: the SDK copies the ids and the Recorder sequences per trace.
func benchCtx() context.Context {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
		Remote:     true,
	})
	return trace.ContextWithSpanContext(context.Background(), sc)
}

var benchEnvelope = progress.Envelope{
	Component: progress.Component{Name: "ansible-driver", Version: "3.2.1"},
	Resource:  progress.Resource{Type: "AssemblyInstance", ID: "asm-7d41c9"},
}

// The typed details of each size. Their json tags give the same keys as
// the maps, so progress and progress-struct emit identical records.

type smallDetails struct {
	TaskName   string `json:"taskName"`
	HostName   string `json:"hostName"`
	ArgsHidden bool   `json:"argsHidden"`
}

type benchTiming struct {
	StartMs    int64 `json:"startMs"`
	DurationMs int64 `json:"durationMs"`
}

type benchTaskResult struct {
	Msg     string      `json:"msg"`
	Changed bool        `json:"changed"`
	Failed  bool        `json:"failed"`
	Rc      int         `json:"rc"`
	Timing  benchTiming `json:"timing"`
}

// mediumDetails has 10 leaves, nested two levels (taskResult.timing).
type mediumDetails struct {
	TaskName          string          `json:"taskName"`
	ItemLabel         string          `json:"itemLabel"`
	HostName          string          `json:"hostName"`
	DelegatedHostName string          `json:"delegatedHostName"`
	TaskResult        benchTaskResult `json:"taskResult"`
}

type benchHostStat struct {
	Ok          int `json:"ok"`
	Changed     int `json:"changed"`
	Failures    int `json:"failures"`
	Skipped     int `json:"skipped"`
	Unreachable int `json:"unreachable"`
}

type benchPlay struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// largeDetails has 50 detail attributes: 6 scalars, 4 slices (one of maps)
// and 8 hosts × 5 stats.
type largeDetails struct {
	Playbook    string                   `json:"playbook"`
	Status      string                   `json:"status"`
	DurationMs  int64                    `json:"durationMs"`
	Changed     bool                     `json:"changed"`
	Failed      int                      `json:"failed"`
	Rc          int                      `json:"rc"`
	Plays       []benchPlay              `json:"plays"`
	Hosts       []string                 `json:"hosts"`
	Tags        []string                 `json:"tags"`
	SkippedTags []string                 `json:"skippedTags"`
	HostStats   map[string]benchHostStat `json:"hostStats"`
}

// benchCase is one event size: its typed details, the same details as a
// map, a hand-built emitter and the same event as slog attrs.
type benchCase struct {
	name      string
	typ       string
	typed     any
	asMap     map[string]any
	baseline  func(ctx context.Context, l log.Logger, seq int64)
	slogAttrs []slog.Attr
}

const (
	kEventType = attribute.Key(wire.AttrEventType)
	kCompName  = attribute.Key(wire.AttrComponentName)
	kCompVer   = attribute.Key(wire.AttrComponentVersion)
	kResType   = attribute.Key(wire.AttrResourceType)
	kResID     = attribute.Key(wire.AttrResourceID)
	kSequence  = attribute.Key(wire.AttrSequence)
	kd         = wire.DetailsPrefix
)

// envelopeAttrs writes the attributes the Recorder writes before details.
func envelopeAttrs(a []attribute.KeyValue, env *progress.Envelope) []attribute.KeyValue {
	return append(a,
		attribute.KeyValue{Key: kEventType, Value: attribute.StringValue(wire.EventType)},
		attribute.KeyValue{Key: kCompName, Value: attribute.StringValue(env.Component.Name)},
		attribute.KeyValue{Key: kCompVer, Value: attribute.StringValue(env.Component.Version)},
		attribute.KeyValue{Key: kResType, Value: attribute.StringValue(env.Resource.Type)},
		attribute.KeyValue{Key: kResID, Value: attribute.StringValue(env.Resource.ID)},
	)
}

// emitBaseline finishes and emits a hand-built record.
func emitBaseline(ctx context.Context, l log.Logger, typ string, attrs []attribute.KeyValue) {
	var rec log.Record
	rec.SetEventName(typ)
	rec.SetTimestamp(time.Now())
	rec.SetSeverity(log.SeverityInfo)
	rec.SetSeverityText("INFO")
	rec.AddAttributes(attrs...)
	l.Emit(ctx, rec)
}

func envelopeSlog(env *progress.Envelope) []slog.Attr {
	return []slog.Attr{
		slog.String(wire.AttrEventType, wire.EventType),
		slog.String(wire.AttrComponentName, env.Component.Name),
		slog.String(wire.AttrComponentVersion, env.Component.Version),
		slog.String(wire.AttrResourceType, env.Resource.Type),
		slog.String(wire.AttrResourceID, env.Resource.ID),
	}
}

func smallCase() benchCase {
	d := smallDetails{TaskName: "Install packages", HostName: "web-01", ArgsHidden: false}
	const typ = "ansible/TaskStartedOnHost"
	const (
		kTask   = attribute.Key(kd + "taskName")
		kHost   = attribute.Key(kd + "hostName")
		kHidden = attribute.Key(kd + "argsHidden")
	)
	return benchCase{
		name:  "small",
		typ:   typ,
		typed: d,
		asMap: map[string]any{"taskName": d.TaskName, "hostName": d.HostName, "argsHidden": d.ArgsHidden},
		baseline: func(ctx context.Context, l log.Logger, seq int64) {
			var buf [9]attribute.KeyValue
			a := envelopeAttrs(buf[:0], &benchEnvelope)
			a = append(a,
				attribute.KeyValue{Key: kHidden, Value: attribute.BoolValue(d.ArgsHidden)},
				attribute.KeyValue{Key: kHost, Value: attribute.StringValue(d.HostName)},
				attribute.KeyValue{Key: kTask, Value: attribute.StringValue(d.TaskName)},
				attribute.KeyValue{Key: kSequence, Value: attribute.Int64Value(seq)},
			)
			emitBaseline(ctx, l, typ, a)
		},
		slogAttrs: append(envelopeSlog(&benchEnvelope),
			slog.Group("progress.details",
				slog.Bool("argsHidden", d.ArgsHidden),
				slog.String("hostName", d.HostName),
				slog.String("taskName", d.TaskName)),
			slog.Int64(wire.AttrSequence, 1)),
	}
}

func mediumCase() benchCase {
	d := mediumDetails{
		TaskName: "Install packages", ItemLabel: "nginx", HostName: "web-01", DelegatedHostName: "bastion-01",
		TaskResult: benchTaskResult{
			Msg: "All items completed", Changed: true, Failed: false, Rc: 0,
			Timing: benchTiming{StartMs: 1764432000123, DurationMs: 2841},
		},
	}
	const typ = "ansible/TaskCompletedOnHost"
	const (
		kDeleg   = attribute.Key(kd + "delegatedHostName")
		kHost    = attribute.Key(kd + "hostName")
		kItem    = attribute.Key(kd + "itemLabel")
		kTask    = attribute.Key(kd + "taskName")
		kChanged = attribute.Key(kd + "taskResult.changed")
		kFailed  = attribute.Key(kd + "taskResult.failed")
		kMsg     = attribute.Key(kd + "taskResult.msg")
		kRc      = attribute.Key(kd + "taskResult.rc")
		kDur     = attribute.Key(kd + "taskResult.timing.durationMs")
		kStart   = attribute.Key(kd + "taskResult.timing.startMs")
	)
	tr := d.TaskResult
	return benchCase{
		name:  "medium",
		typ:   typ,
		typed: d,
		asMap: map[string]any{
			"taskName": d.TaskName, "itemLabel": d.ItemLabel, "hostName": d.HostName,
			"delegatedHostName": d.DelegatedHostName,
			"taskResult": map[string]any{
				"msg": tr.Msg, "changed": tr.Changed, "failed": tr.Failed, "rc": tr.Rc,
				"timing": map[string]any{"startMs": tr.Timing.StartMs, "durationMs": tr.Timing.DurationMs},
			},
		},
		baseline: func(ctx context.Context, l log.Logger, seq int64) {
			var buf [16]attribute.KeyValue
			a := envelopeAttrs(buf[:0], &benchEnvelope)
			a = append(a,
				attribute.KeyValue{Key: kDeleg, Value: attribute.StringValue(d.DelegatedHostName)},
				attribute.KeyValue{Key: kHost, Value: attribute.StringValue(d.HostName)},
				attribute.KeyValue{Key: kItem, Value: attribute.StringValue(d.ItemLabel)},
				attribute.KeyValue{Key: kTask, Value: attribute.StringValue(d.TaskName)},
				attribute.KeyValue{Key: kChanged, Value: attribute.BoolValue(d.TaskResult.Changed)},
				attribute.KeyValue{Key: kFailed, Value: attribute.BoolValue(d.TaskResult.Failed)},
				attribute.KeyValue{Key: kMsg, Value: attribute.StringValue(d.TaskResult.Msg)},
				attribute.KeyValue{Key: kRc, Value: attribute.Int64Value(int64(d.TaskResult.Rc))},
				attribute.KeyValue{Key: kDur, Value: attribute.Int64Value(d.TaskResult.Timing.DurationMs)},
				attribute.KeyValue{Key: kStart, Value: attribute.Int64Value(d.TaskResult.Timing.StartMs)},
				attribute.KeyValue{Key: kSequence, Value: attribute.Int64Value(seq)},
			)
			emitBaseline(ctx, l, typ, a)
		},
		slogAttrs: append(envelopeSlog(&benchEnvelope),
			slog.Group("progress.details",
				slog.String("delegatedHostName", d.DelegatedHostName),
				slog.String("hostName", d.HostName),
				slog.String("itemLabel", d.ItemLabel),
				slog.String("taskName", d.TaskName),
				slog.Group("taskResult",
					slog.Bool("changed", tr.Changed),
					slog.Bool("failed", tr.Failed),
					slog.String("msg", tr.Msg),
					slog.Int("rc", tr.Rc),
					slog.Group("timing",
						slog.Int64("durationMs", tr.Timing.DurationMs),
						slog.Int64("startMs", tr.Timing.StartMs)))),
			slog.Int64(wire.AttrSequence, 1)),
	}
}

func largeCase() benchCase {
	hosts := []string{"app-01", "app-02", "app-03", "db-01", "db-02", "lb-01", "web-01", "web-02"}
	d := largeDetails{
		Playbook: "site.yml", Status: "successful", DurationMs: 184213, Changed: true, Failed: 0, Rc: 0,
		Plays: []benchPlay{
			{ID: "0242ac11-0002-0001", Name: "Prepare hosts"},
			{ID: "0242ac11-0002-0002", Name: "Deploy application"},
			{ID: "0242ac11-0002-0003", Name: "Verify"},
		},
		Hosts:       hosts,
		Tags:        []string{"deploy", "nginx", "tls"},
		SkippedTags: []string{"debug", "slow"},
		HostStats:   map[string]benchHostStat{},
	}
	for i, h := range hosts {
		d.HostStats[h] = benchHostStat{Ok: 20 + i, Changed: 3 + i%2, Failures: 0, Skipped: 2, Unreachable: 0}
	}

	const typ = "ansible/PlaybookResult"
	const (
		kChanged  = attribute.Key(kd + "changed")
		kDur      = attribute.Key(kd + "durationMs")
		kFailed   = attribute.Key(kd + "failed")
		kHosts    = attribute.Key(kd + "hosts")
		kPlaybook = attribute.Key(kd + "playbook")
		kPlays    = attribute.Key(kd + "plays")
		kRc       = attribute.Key(kd + "rc")
		kSkipped  = attribute.Key(kd + "skippedTags")
		kStatus   = attribute.Key(kd + "status")
		kTags     = attribute.Key(kd + "tags")
	)
	// A hand-written emitter has its per-host keys ready; it walks the
	// hosts in a fixed order and reads their stats.
	type hostEntry struct {
		keys [5]attribute.Key
		stat benchHostStat
	}
	entries := make([]hostEntry, 0, len(hosts))
	for _, h := range slices.Sorted(maps.Keys(d.HostStats)) {
		p := kd + "hostStats." + h + "."
		entries = append(entries, hostEntry{
			keys: [5]attribute.Key{
				attribute.Key(p + "changed"), attribute.Key(p + "failures"), attribute.Key(p + "ok"),
				attribute.Key(p + "skipped"), attribute.Key(p + "unreachable"),
			},
			stat: d.HostStats[h],
		})
	}
	// SliceValue copies its arguments, so one scratch slice serves every
	// call (the baseline runs on one goroutine).
	scratch := make([]attribute.Value, 0, 16)
	strs := func(ss []string) attribute.Value {
		v := scratch[:0]
		for _, s := range ss {
			v = append(v, attribute.StringValue(s))
		}
		return attribute.SliceValue(v...)
	}

	plays := make([]any, len(d.Plays))
	for i, p := range d.Plays {
		plays[i] = map[string]any{"id": p.ID, "name": p.Name}
	}
	hostStats := map[string]any{}
	slogHosts := make([]any, 0, len(hosts))
	for _, h := range slices.Sorted(maps.Keys(d.HostStats)) {
		s := d.HostStats[h]
		hostStats[h] = map[string]any{
			"ok": s.Ok, "changed": s.Changed, "failures": s.Failures, "skipped": s.Skipped, "unreachable": s.Unreachable,
		}
		slogHosts = append(slogHosts, slog.Group(h,
			slog.Int("changed", s.Changed), slog.Int("failures", s.Failures), slog.Int("ok", s.Ok),
			slog.Int("skipped", s.Skipped), slog.Int("unreachable", s.Unreachable)))
	}
	return benchCase{
		name:  "large",
		typ:   typ,
		typed: d,
		asMap: map[string]any{
			"playbook": d.Playbook, "status": d.Status, "durationMs": d.DurationMs, "changed": d.Changed,
			"failed": d.Failed, "rc": d.Rc, "plays": plays, "hosts": d.Hosts, "tags": d.Tags,
			"skippedTags": d.SkippedTags, "hostStats": hostStats,
		},
		baseline: func(ctx context.Context, l log.Logger, seq int64) {
			var buf [64]attribute.KeyValue
			a := envelopeAttrs(buf[:0], &benchEnvelope)
			var pv [3]attribute.Value
			for i, p := range d.Plays {
				pv[i] = attribute.MapValue(
					attribute.KeyValue{Key: "id", Value: attribute.StringValue(p.ID)},
					attribute.KeyValue{Key: "name", Value: attribute.StringValue(p.Name)})
			}
			a = append(a,
				attribute.KeyValue{Key: kChanged, Value: attribute.BoolValue(d.Changed)},
				attribute.KeyValue{Key: kDur, Value: attribute.Int64Value(d.DurationMs)},
				attribute.KeyValue{Key: kFailed, Value: attribute.Int64Value(int64(d.Failed))},
			)
			for i := range entries {
				e := &entries[i]
				a = append(a,
					attribute.KeyValue{Key: e.keys[0], Value: attribute.Int64Value(int64(e.stat.Changed))},
					attribute.KeyValue{Key: e.keys[1], Value: attribute.Int64Value(int64(e.stat.Failures))},
					attribute.KeyValue{Key: e.keys[2], Value: attribute.Int64Value(int64(e.stat.Ok))},
					attribute.KeyValue{Key: e.keys[3], Value: attribute.Int64Value(int64(e.stat.Skipped))},
					attribute.KeyValue{Key: e.keys[4], Value: attribute.Int64Value(int64(e.stat.Unreachable))},
				)
			}
			a = append(a,
				attribute.KeyValue{Key: kHosts, Value: strs(d.Hosts)},
				attribute.KeyValue{Key: kPlaybook, Value: attribute.StringValue(d.Playbook)},
				attribute.KeyValue{Key: kPlays, Value: attribute.SliceValue(pv[:len(d.Plays)]...)},
				attribute.KeyValue{Key: kRc, Value: attribute.Int64Value(int64(d.Rc))},
				attribute.KeyValue{Key: kSkipped, Value: strs(d.SkippedTags)},
				attribute.KeyValue{Key: kStatus, Value: attribute.StringValue(d.Status)},
				attribute.KeyValue{Key: kTags, Value: strs(d.Tags)},
				attribute.KeyValue{Key: kSequence, Value: attribute.Int64Value(seq)},
			)
			emitBaseline(ctx, l, typ, a)
		},
		slogAttrs: append(envelopeSlog(&benchEnvelope),
			slog.Group("progress.details",
				slog.Bool("changed", d.Changed),
				slog.Int64("durationMs", d.DurationMs),
				slog.Int("failed", d.Failed),
				slog.Group("hostStats", slogHosts...),
				slog.Any("hosts", d.Hosts),
				slog.String("playbook", d.Playbook),
				slog.Any("plays", plays),
				slog.Int("rc", d.Rc),
				slog.Any("skippedTags", d.SkippedTags),
				slog.String("status", d.Status),
				slog.Any("tags", d.Tags)),
			slog.Int64(wire.AttrSequence, 1)),
	}
}

// flatSlogAttrs is the event as slog attrs under the keys progress writes
// (progress.details.taskResult.msg, ...), instead of nested groups.
func flatSlogAttrs(c benchCase) []slog.Attr {
	attrs := envelopeSlog(&benchEnvelope)
	details, _ := progresstest.Flatten(c.asMap)
	for _, kv := range details {
		attrs = append(attrs, slog.Any(string(kv.Key), progresstest.ValueOf(kv.Value)))
	}
	return append(attrs, slog.Int64(wire.AttrSequence, 1))
}

func benchCases() []benchCase { return []benchCase{smallCase(), mediumCase(), largeCase()} }

// BenchmarkRecord compares, per event size, progress.Record with the
// hand-built limit and with the slog routes. bench/ratios.sh turns its
// output into ratios to the baseline.
func BenchmarkRecord(b *testing.B) {
	ctx := benchCtx()
	for _, c := range benchCases() {
		b.Run(c.name, func(b *testing.B) {
			b.Run("baseline", func(b *testing.B) {
				l := newBenchProvider(b).Logger(wire.ScopeName, log.WithInstrumentationVersion(wire.ScopeVersion))
				var seq atomic.Int64
				loop(b, func() { c.baseline(ctx, l, seq.Add(1)) })
			})
			b.Run("progress", func(b *testing.B) {
				r := progress.NewRecorder(progress.WithLoggerProvider(newBenchProvider(b)))
				evt := progress.Event{Type: c.typ, Details: c.asMap, Envelope: benchEnvelope}
				loop(b, func() { mustRecord(b, r, ctx, evt) })
			})
			b.Run("progress-struct", func(b *testing.B) {
				r := progress.NewRecorder(progress.WithLoggerProvider(newBenchProvider(b)))
				evt := progress.Event{Type: c.typ, Details: c.typed, Envelope: benchEnvelope}
				loop(b, func() { mustRecord(b, r, ctx, evt) })
			})
			b.Run("otelslog", func(b *testing.B) {
				l := slog.New(otelslog.NewHandler(wire.ScopeName,
					otelslog.WithLoggerProvider(newBenchProvider(b)), otelslog.WithVersion(wire.ScopeVersion)))
				loop(b, func() { l.LogAttrs(ctx, slog.LevelInfo, c.typ, c.slogAttrs...) })
			})
			// The same event with the flattened keys progress writes, so
			// that the SDK receives as many attributes as from progress.
			flat := flatSlogAttrs(c)
			b.Run("otelslog-flat", func(b *testing.B) {
				l := slog.New(otelslog.NewHandler(wire.ScopeName,
					otelslog.WithLoggerProvider(newBenchProvider(b)), otelslog.WithVersion(wire.ScopeVersion)))
				loop(b, func() { l.LogAttrs(ctx, slog.LevelInfo, c.typ, flat...) })
			})
			b.Run("slog-json", func(b *testing.B) {
				l := slog.New(slog.NewJSONHandler(io.Discard, nil))
				loop(b, func() { l.LogAttrs(ctx, slog.LevelInfo, c.typ, c.slogAttrs...) })
			})
		})
	}
}

// BenchmarkRecordNoProvider is Record when no SDK is installed: the global
// LoggerProvider is the API's no-op, so Record must return after Enabled.
// It must run in a process where no test installed a global provider
// (make bench runs benchmarks only).
func BenchmarkRecordNoProvider(b *testing.B) {
	r := progress.NewRecorder()
	c := smallCase()
	evt := progress.Event{Type: c.typ, Details: c.asMap, Envelope: benchEnvelope}
	ctx := benchCtx()
	loop(b, func() { mustRecord(b, r, ctx, evt) })
}

func mustRecord(b *testing.B, r *progress.Recorder, ctx context.Context, evt progress.Event) {
	if err := r.Record(ctx, evt); err != nil {
		b.Fatal(err)
	}
}

// benchCapture keeps clones of every record, as an exporter would get them.
type benchCapture struct{ records []sdklog.Record }

func (c *benchCapture) OnEmit(_ context.Context, r *sdklog.Record) error {
	c.records = append(c.records, r.Clone())
	return nil
}
func (c *benchCapture) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (c *benchCapture) Shutdown(context.Context) error                         { return nil }
func (c *benchCapture) ForceFlush(context.Context) error                       { return nil }

type benchAttr struct {
	key string
	val attribute.Value
}

// benchRecordShape is what a record carries, attributes sorted by key;
// the sequence value is blanked (the baseline counts globally, the
// Recorder per trace) but its presence and type are kept.
func benchRecordShape(r *sdklog.Record) (head [4]string, attrs []benchAttr) {
	head = [4]string{r.EventName(), r.Severity().String(), r.SeverityText(), r.Body().String()}
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		if kv.Key == kSequence {
			kv.Value = attribute.Int64Value(0)
		}
		attrs = append(attrs, benchAttr{string(kv.Key), kv.Value})
		return true
	})
	sort.Slice(attrs, func(i, j int) bool { return attrs[i].key < attrs[j].key })
	return head, attrs
}

// TestBenchVariantsEquivalent guards the fairness of BenchmarkRecord: the
// baseline, progress and progress-struct variants must emit the same
// record, or the ratios compare different work.
func TestBenchVariantsEquivalent(t *testing.T) {
	ctx := benchCtx()
	for _, c := range benchCases() {
		t.Run(c.name, func(t *testing.T) {
			capt := &benchCapture{}
			lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(capt))
			t.Cleanup(func() { _ = lp.Shutdown(context.Background()) })

			c.baseline(ctx, lp.Logger(wire.ScopeName), 1)
			r := progress.NewRecorder(progress.WithLoggerProvider(lp))
			for _, d := range []any{c.asMap, c.typed} {
				if err := r.Record(ctx, progress.Event{Type: c.typ, Details: d, Envelope: benchEnvelope}); err != nil {
					t.Fatal(err)
				}
			}
			if len(capt.records) != 3 {
				t.Fatalf("captured %d records, want 3", len(capt.records))
			}
			wantHead, want := benchRecordShape(&capt.records[0])
			if wantHead[0] != c.typ || wantHead[2] != "INFO" {
				t.Fatalf("baseline head = %q", wantHead)
			}
			for i, name := range []string{"progress", "progress-struct"} {
				rec := &capt.records[i+1]
				if rec.Timestamp().IsZero() {
					t.Errorf("%s: zero timestamp", name)
				}
				head, got := benchRecordShape(rec)
				if head != wantHead {
					t.Errorf("%s: head = %q, baseline %q", name, head, wantHead)
				}
				if len(got) != len(want) {
					t.Errorf("%s: %d attributes, baseline %d", name, len(got), len(want))
				}
				for j := range min(len(got), len(want)) {
					if got[j].key != want[j].key || got[j].val.Type() != want[j].val.Type() ||
						got[j].val.String() != want[j].val.String() {
						t.Errorf("%s: attribute %d = %s=%s (%s), baseline %s=%s (%s)", name, j,
							got[j].key, got[j].val.String(), got[j].val.Type(), want[j].key, want[j].val.String(), want[j].val.Type())
					}
				}
			}
			// The sizes are the benchmark's claim.
			if got, want := countDetails(&capt.records[0]), map[string]int{"small": 3, "medium": 10, "large": 50}[c.name]; got != want {
				t.Errorf("baseline has %d detail attributes, want %d", got, want)
			}
		})
	}
}

func countDetails(r *sdklog.Record) int {
	n := 0
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		if len(kv.Key) > len(kd) && string(kv.Key[:len(kd)]) == kd {
			n++
		}
		return true
	})
	return n
}

// TestRecordNoProviderAllocs pins the no-provider fast path: with the API's
// no-op LoggerProvider, Record allocates nothing.
func TestRecordNoProviderAllocs(t *testing.T) {
	r := progress.NewRecorder(progress.WithLoggerProvider(noop.NewLoggerProvider()))
	evt := progress.Event{Type: "ansible/TaskStartedOnHost", Details: smallCase().asMap, Envelope: benchEnvelope}
	ctx := benchCtx()
	if n := testing.AllocsPerRun(100, func() { _ = r.Record(ctx, evt) }); n != 0 {
		t.Errorf("Record with a disabled logger: %v allocs/op, want 0", n)
	}
}

// dropLogger is an enabled log.Logger that drops every record: with it,
// BenchmarkRecordOverhead measures the Recorder's own work (validation,
// flattening, sequencing, building the log.Record) without the SDK.
type dropLogger struct{ embedded.Logger }

func (dropLogger) Emit(context.Context, log.Record)                    {}
func (dropLogger) Enabled(context.Context, log.EnabledParameters) bool { return true }

type dropProvider struct{ embedded.LoggerProvider }

func (dropProvider) Logger(string, ...log.LoggerOption) log.Logger { return dropLogger{} }

// BenchmarkRecordOverhead is the part of BenchmarkRecord/<size>/progress
// and progress-struct that the Recorder itself spends.
func BenchmarkRecordOverhead(b *testing.B) {
	ctx := benchCtx()
	for _, c := range benchCases() {
		for _, v := range []struct {
			name    string
			details any
		}{{"progress", c.asMap}, {"progress-struct", c.typed}} {
			b.Run(c.name+"/"+v.name, func(b *testing.B) {
				r := progress.NewRecorder(progress.WithLoggerProvider(dropProvider{}))
				evt := progress.Event{Type: c.typ, Details: v.details, Envelope: benchEnvelope}
				loop(b, func() { mustRecord(b, r, ctx, evt) })
			})
		}
	}
}

// BenchmarkRecordWorst is Record on the worst inputs of issue 12 (see
// internal/testkit/hostile.Shapes), through the production set-up of
// BenchmarkRecord, at the size (x1) and four times larger (x4):
// past the limits the cost of a call no longer grows with its input.
// BENCHMARKS.md compares it with BenchmarkRecord/large/progress.
func BenchmarkRecordWorst(b *testing.B) {
	ctx := benchCtx()
	for _, scale := range []int{1, 4} {
		for _, s := range hostile.Shapes(scale) {
			b.Run(s.Name+"/x"+strconv.Itoa(scale), func(b *testing.B) {
				r := progress.NewRecorder(progress.WithLoggerProvider(newBenchProvider(b)))
				evt := progress.Event{Type: "ansible/PlaybookResult", Details: s.Details, Envelope: benchEnvelope}
				loop(b, func() { mustRecord(b, r, ctx, evt) })
			})
		}
	}
}

// raceEnabled: under the race detector sync.Pool drops items at random, so
// allocation counts are not meaningful.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// TestRecordAllocs pins the Recorder's own allocations per Record, with a
// logger that is enabled and drops the record. For small and medium events
// the one allocation is log.Record's overflow slice for attributes beyond
// its five inline slots, which a hand-built record of the same attributes
// makes too. The large event's slice and map values cost one allocation
// each in attribute.SliceValue/MapValue, plus two per string-keyed map of
// structs.
func TestRecordAllocs(t *testing.T) {
	if raceEnabled() {
		t.Skip("allocation counts vary under the race detector")
	}
	ctx := benchCtx()
	r := progress.NewRecorder(progress.WithLoggerProvider(dropProvider{}))
	want := map[string][2]float64{"small": {1, 1}, "medium": {1, 1}, "large": {9, 12}}
	for _, c := range benchCases() {
		for i, d := range []any{c.asMap, c.typed} {
			evt := progress.Event{Type: c.typ, Details: d, Envelope: benchEnvelope}
			_ = r.Record(ctx, evt) // warm the key cache and the type plan
			got := testing.AllocsPerRun(200, func() { _ = r.Record(ctx, evt) })
			if got > want[c.name][i] {
				t.Errorf("%s %T: %v allocs/op, want at most %v", c.name, d, got, want[c.name][i])
			}
		}
	}
}

// TestRecordAllocsContextEnvelope: the envelope set once on the context
// costs no allocation per record, in Record, RecordTransition and a
// Tracker's suppressed observation, and neither does the lookup when no
// envelope is set (TestRecordAllocs).
func TestRecordAllocsContextEnvelope(t *testing.T) {
	if raceEnabled() {
		t.Skip("allocation counts vary under the race detector")
	}
	r := progress.NewRecorder(progress.WithLoggerProvider(dropProvider{}))
	ctx := progress.ContextWithEnvelope(benchCtx(), benchEnvelope)
	for _, c := range benchCases() {
		evt := progress.Event{Type: c.typ, Details: c.asMap}
		_ = r.Record(ctx, evt)
		bare := testing.AllocsPerRun(200, func() {
			_ = r.Record(benchCtx(), progress.Event{Type: c.typ, Details: c.asMap, Envelope: benchEnvelope})
		})
		got := testing.AllocsPerRun(200, func() { _ = r.Record(ctx, evt) })
		if got > bare {
			t.Errorf("%s: %v allocs/op with the envelope on the context, %v with it on the event", c.name, got, bare)
		}
	}
	tr := progress.Transition{Stream: progress.StreamLifecycle, Condition: progress.Condition{Status: "Running"}}
	_ = r.RecordTransition(ctx, tr)
	own := tr
	own.Envelope = benchEnvelope
	bare := testing.AllocsPerRun(200, func() { _ = r.RecordTransition(benchCtx(), own) })
	if got := testing.AllocsPerRun(200, func() { _ = r.RecordTransition(ctx, tr) }); got > bare {
		t.Errorf("RecordTransition: %v allocs/op with the envelope on the context, %v with it on the transition", got, bare)
	}
	tk := progress.NewTracker(r)
	_, _ = tk.Observe(ctx, tr)
	if got := testing.AllocsPerRun(200, func() { _, _ = tk.Observe(ctx, tr) }); got > 0 {
		t.Errorf("Tracker.Observe (unchanged): %v allocs/op with the envelope on the context, want 0", got)
	}
}

// BenchmarkRecordContextEnvelope is BenchmarkRecord's small event with the
// envelope on the context instead of the event.
func BenchmarkRecordContextEnvelope(b *testing.B) {
	r := progress.NewRecorder(progress.WithLoggerProvider(dropProvider{}))
	c := benchCases()[0]
	for _, tc := range []struct {
		name string
		ctx  context.Context
		evt  progress.Event
	}{
		{"event", benchCtx(), progress.Event{Type: c.typ, Details: c.asMap, Envelope: benchEnvelope}},
		{"context", progress.ContextWithEnvelope(benchCtx(), benchEnvelope), progress.Event{Type: c.typ, Details: c.asMap}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = r.Record(tc.ctx, tc.evt)
			}
		})
	}
}
