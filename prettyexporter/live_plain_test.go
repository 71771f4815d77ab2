package prettyexporter

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/progress"
)

// plainRun exports recs in batches of n to a plain-mode exporter, the
// clock at each batch's last record, and returns what it wrote.
func plainRun(t *testing.T, recs []step, n int) string {
	t.Helper()
	var out testutil.SyncBuffer
	clock := &fakeClock{t: recs[0].when()}
	e, _ := NewLive(WithWriter(&out), WithLiveMode(LivePlain), WithColor(ColorNever), WithoutTime(), withClock(clock))
	for i := 0; i < len(recs); i += n {
		batch := recs[i:min(i+n, len(recs))]
		clock.set(batch[len(batch)-1].when())
		if err := e.feed(batch); err != nil {
			t.Fatal(err)
		}
		if err := e.ForceFlush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestLivePlainGolden: where the output is not a terminal, today's pretty
// lines, with the resource, trace id and transaction id moved into one
// header line per operation.
func TestLivePlainGolden(t *testing.T) {
	ansibleOut := plainRun(t, ansibleRecords(t, "../ansible/testdata/streams/site.jsonl"), 7)
	tofuOut := plainRun(t, terraformRecords(t, "../terraform/testdata/streams/tofu-apply-failing.jsonl", "Install"), 7)
	for _, out := range []string{ansibleOut, tofuOut} {
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if !strings.HasPrefix(lines[0], "▸ Install  resource::") || !strings.Contains(lines[0], "trace 7a856149  tx=tx-7d9b") {
			t.Errorf("first line %q, want the operation's header", lines[0])
		}
		for _, l := range lines[1:] {
			if strings.Contains(l, "tx=") || strings.Contains(l, "7a856149") || strings.Contains(l, "resource::") {
				t.Errorf("the context repeated on a line: %q", l)
			}
		}
	}
	compareGolden(t, "testdata/live/plain-ansible-site.golden", []byte(ansibleOut))
	compareGolden(t, "testdata/live/plain-tofu-apply-failing.golden", []byte(tofuOut))
}

// progressRun records an operation with the given progress steps, one
// record per step at the given times, to a plain exporter, then lets the
// clock run to end.
func progressLines(t *testing.T, steps []int64, total int64, at []time.Duration, end time.Duration) []string {
	t.Helper()
	p := newPipeline(t)
	ctx, span := p.tp.Tracer("t").Start(p.ctx, "Install")
	defer span.End()
	rec := func(e progress.Event, d time.Duration) {
		e.Time = t0.Add(d)
		if err := p.rec.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	rec(progress.OperationStarted("Install"), 0)
	for i, n := range steps {
		rec(progress.Progress(n, total, "resources"), at[i])
	}
	var out testutil.SyncBuffer
	clock := &fakeClock{t: t0}
	e, _ := NewLive(WithWriter(&out), WithLiveMode(LivePlain), WithColor(ColorNever), WithoutTime(), withClock(clock))
	defer e.Shutdown(context.Background())
	for _, r := range p.kept.Records() {
		clock.set(r.Timestamp())
		_ = e.Export(context.Background(), []sdklog.Record{r})
		_ = e.ForceFlush(context.Background())
	}
	clock.set(t0.Add(end))
	_ = e.ForceFlush(context.Background())
	var got []string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, "common/Progress") {
			got = append(got, strings.TrimPrefix(l, "INF common/Progress  "))
		}
	}
	return got
}

// TestLivePlainProgressThrottle: progress lines only on a 5% change, or
// when 5 s have passed; the first and the last always; a value held back
// comes out 5 s later, so the latest is never lost.
func TestLivePlainProgressThrottle(t *testing.T) {
	var steps []int64
	var at []time.Duration
	for i := int64(0); i <= 1000; i += 10 {
		steps = append(steps, i)
		at = append(at, time.Duration(i)*time.Millisecond) // 101 steps in one second
	}
	got := progressLines(t, steps, 1000, at, 2*time.Second)
	if len(got) != 21 {
		t.Errorf("%d progress lines, want 21 (0%%, every 5%%, 100%%):\n%s", len(got), strings.Join(got, "\n"))
	}
	if got[0] != "completed=0 total=1000 unit=resources" || got[len(got)-1] != "completed=1000 total=1000 unit=resources" {
		t.Errorf("first %q, last %q", got[0], got[len(got)-1])
	}

	// 1% and 2% are held back; 5 s later the latest held back is printed.
	got = progressLines(t, []int64{0, 10, 20}, 1000, []time.Duration{0, time.Second, 2 * time.Second}, 7*time.Second)
	if want := []string{"completed=0 total=1000 unit=resources", "completed=20 total=1000 unit=resources"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}

	// Unknown total: one line per 5 s at most.
	got = progressLines(t, []int64{1, 2, 3, 4}, 0, []time.Duration{0, time.Second, 6 * time.Second, 7 * time.Second}, 8*time.Second)
	if want := []string{"completed=1 total=0 unit=resources", "completed=3 total=0 unit=resources"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestLivePlainHeartbeat: a step that runs long without a line gets a
// "still running [30s]" line every 30 s, naming the step: the running
// span that started last.
func TestLivePlainHeartbeat(t *testing.T) {
	p := newPipeline(t)
	ctx, span := p.tp.Tracer("t").Start(p.ctx, "Install", trace.WithTimestamp(t0))
	defer span.End()
	// The step is a span, as any driver's step: a host's task here.
	_ = p.rec.Record(ctx, progress.Event{Type: progress.TypeOperationStarted, Details: map[string]any{"operation": "Install"}, Time: t0})
	tracer := p.tp.Tracer("t")
	pctx, _ := tracer.Start(ctx, "play web", trace.WithTimestamp(t0.Add(time.Second)))
	tctx, _ := tracer.Start(pctx, "task Wait for the database", trace.WithTimestamp(t0.Add(2*time.Second)))
	tracer.Start(tctx, "host web-1", trace.WithTimestamp(t0.Add(3*time.Second)))
	var out testutil.SyncBuffer
	clock := &fakeClock{t: t0.Add(3 * time.Second)}
	e, _ := NewLive(WithWriter(&out), WithLiveMode(LivePlain), WithColor(ColorNever), WithoutTime(), withClock(clock))
	defer e.Shutdown(context.Background())
	_ = e.feed(p.kept.Steps())
	_ = e.ForceFlush(context.Background())
	for _, s := range []int{20, 34, 50, 64} {
		clock.set(t0.Add(time.Duration(s) * time.Second))
		_ = e.ForceFlush(context.Background())
	}
	beats := regexp.MustCompile(`(?m)^INF host web-1: still running \[([0-9ms]+)\]$`).FindAllStringSubmatch(out.String(), -1)
	if len(beats) != 2 || beats[0][1] != "31s" || beats[1][1] != "1m01s" {
		t.Errorf("heartbeats %v, want at 31s and 61s of the host's task:\n%s", beats, out.String())
	}
}

// TestLivePlainHeaders: lines of two operations that interleave each sit
// under their operation's header.
func TestLivePlainHeaders(t *testing.T) {
	p := newPipeline(t)
	tracer := p.tp.Tracer("t")
	a, sa := tracer.Start(p.ctx, "A")
	b, sb := tracer.Start(p.ctx, "B")
	defer sa.End()
	defer sb.End()
	for i, c := range []context.Context{a, b, b, a} {
		e := progress.Event{Type: "mydriver/Step", Details: map[string]any{"n": i}, Time: t0.Add(time.Duration(i) * time.Second)}
		_ = p.rec.Record(c, e)
	}
	out := plainRun(t, p.kept.Steps(), 10)
	want := "▸ A  trace 7a856149  tx=tx-7d9b\n" +
		"INF mydriver/Step  n=0\n" +
		"▸ B  trace 7a858149  tx=tx-7d9b\n" +
		"INF mydriver/Step  n=1\n" +
		"INF mydriver/Step  n=2\n" +
		"▸ A  trace 7a856149  tx=tx-7d9b\n" +
		"INF mydriver/Step  n=3\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// TestLiveTermDumb: TERM=dumb gives plain lines whatever the mode asked.
func TestLiveTermDumb(t *testing.T) {
	t.Setenv("TERM", "dumb")
	var buf bytes.Buffer
	e, _ := NewLive(WithWriter(&buf), WithLiveMode(LiveTerminal))
	defer e.Shutdown(context.Background())
	if !e.Plain() {
		t.Error("TERM=dumb: not plain")
	}
	t.Setenv("TERM", "xterm-256color")
	e2, _ := NewLive(WithWriter(&buf))
	defer e2.Shutdown(context.Background())
	if !e2.Plain() {
		t.Error("a buffer is no terminal: LiveAuto must be plain")
	}
}

// TestLiveNoColor: NO_COLOR wins over ColorAlways: the live area is drawn
// with the cursor sequences only, no SGR.
func TestLiveNoColor(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	var out testutil.SyncBuffer
	recs := ansibleRecords(t, "../ansible/testdata/streams/site.jsonl")
	e, _ := NewLive(WithWriter(&out), WithLiveMode(LiveTerminal), WithColor(ColorAlways),
		WithTerminalSize(func() (int, int) { return 100, 20 }))
	if e.Colored() {
		t.Error("NO_COLOR set, yet colour")
	}
	_ = e.feed(recs[:30])
	_ = e.ForceFlush(context.Background())
	_ = e.feed(recs[30:])
	_ = e.Shutdown(context.Background())
	rest := regexp.MustCompile(`\x1b\[(K|J|[0-9]+A)`).ReplaceAllString(out.String(), "")
	if i := strings.IndexByte(rest, 0x1b); i >= 0 {
		t.Errorf("an escape sequence other than the cursor's: %q", rest[i:min(len(rest), i+10)])
	}
	if !strings.Contains(rest, "✗ Install  resource::nginx::1.0/nginx-web-tier") {
		t.Errorf("no final header in %q", rest)
	}
}
