package prettyexporter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/testkit/cisyntax"
	"github.com/progressotel/progressotel/internal/testkit/testutil"
	"github.com/progressotel/progressotel/otelbridge/sdkparts"
	"github.com/progressotel/progressotel/progress"
)

// ciRun exports recs in batches of n to a CI-format exporter of the given CI (GITLAB_CI=true or
// GITHUB_ACTIONS=true in its environment), the clock at each batch's last record, and returns what
// it wrote and the step summary (GitHub's).
func ciRun(t *testing.T, gitlab bool, recs []step, n int) (out, summary string) {
	t.Helper()
	summaryFile := filepath.Join(t.TempDir(), "summary.md")
	if gitlab {
		t.Setenv("GITLAB_CI", "true")
		t.Setenv("GITHUB_ACTIONS", "")
		t.Setenv("GITHUB_STEP_SUMMARY", "")
	} else {
		t.Setenv("GITLAB_CI", "")
		t.Setenv("GITHUB_ACTIONS", "true")
		t.Setenv("GITHUB_STEP_SUMMARY", summaryFile)
	}
	var buf testutil.SyncBuffer
	clock := &fakeClock{t: recs[0].when()}
	e, _ := NewLive(WithWriter(&buf), WithLiveMode(LiveCI), WithColor(ColorNever), WithoutTime(), withClock(clock))
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
	b, _ := os.ReadFile(summaryFile)
	return buf.String(), string(b)
}

// ciPipeline is a CI-format live exporter behind a logger provider (with
// the tracectx processor, as otelbridge.Setup builds it) and a tracer
// provider, and a Recorder on that logger provider.
type ciPipeline struct {
	out *testutil.SyncBuffer
	e   *LiveExporter
	lp  *sdklog.LoggerProvider
	tp  *sdktrace.TracerProvider
	rec *progress.Recorder
}

// newCIPipeline builds a ciPipeline whose exporter has opts besides its
// writer, LiveCI and no colour; the tracer provider is shut down with the
// test.
func newCIPipeline(t *testing.T, opts ...Option) *ciPipeline {
	t.Helper()
	p := &ciPipeline{out: new(testutil.SyncBuffer)}
	p.e, _ = NewLive(append([]Option{WithWriter(p.out), WithLiveMode(LiveCI), WithColor(ColorNever)}, opts...)...)
	p.lp = sdklog.NewLoggerProvider(
		sdklog.WithProcessor(sdkparts.NewTraceCtxProcessor(progress.DefaultRedactor())),
		sdklog.WithProcessor(p.e.LogProcessor()))
	p.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p.e.SpanProcessor()))
	t.Cleanup(func() { _ = p.tp.Shutdown(context.Background()) })
	p.rec = progress.NewRecorder(progress.WithLoggerProvider(p.lp))
	return p
}

// recordInPlay returns a function that records an event as a task of the
// play site.yml does (its envelope).
func (p *ciPipeline) recordInPlay(t *testing.T) func(context.Context, progress.Event) {
	env := progress.Envelope{Resource: progress.Resource{Type: "Play", ID: "site.yml"}}
	return func(ctx context.Context, ev progress.Event) {
		ev.Envelope = env
		if err := p.rec.Record(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
}

// failedGlyph reports whether a row starts with the glyph of a failure.
func failedGlyph(row string) bool {
	for st := stCancelled; st < numStatus; st++ {
		if strings.HasPrefix(row, looks[st].glyph+" ") {
			return true
		}
	}
	return false
}

// TestCIGolden: a real Ansible run (with an unreachable host) and a real tofu apply with two
// failing resources, from recorded streams through the adapters, in both CI formats: goldens,
// checked by a parser of each CI's documented syntax. On GitHub: one group per task or resource
// operation named by its path, the failed ones and every ERR line outside any group, one ::error
// per failure with its path and message, the step summary in Markdown. On GitLab: sections nested
// as the tree (operation › play › task), a task's section collapsed when it succeeded and open
// when it failed, every ERR line in an open section.
func TestCIGolden(t *testing.T) {
	runs := []struct {
		name     string
		recs     func() []step
		errors   []cisyntax.Annotation
		sections int // GitLab's, nested: at least this deep
	}{
		{"ansible-site", func() []step { return ansibleRecords(t, "../ansible/testdata/streams/site.jsonl") },
			[]cisyntax.Annotation{{Title: "Install › play Reach the edge proxy › task Check the edge proxy › host edge-proxy",
				Message: "Failed to connect to the host via ssh: ssh: connect to host 127.0.0.1 port 37343: Connection refused"}}, 2},
		{"tofu-apply-failing", func() []step {
			return terraformRecords(t, "../terraform/testdata/streams/tofu-apply-failing.jsonl", "Install")
		}, []cisyntax.Annotation{
			{Title: "Install › create terraform_data.broken", Message: "local-exec provisioner error: Error running command 'echo about to fail; echo disk full >&2; exit 3': exit status 3. Output: about to fail disk full"},
			{Title: "Install › create terraform_data.leaky", Message: "local-exec provisioner error: (detail withheld: the resource's provisioner configuration holds a sensitive value)"},
		}, 1},
	}
	for _, run := range runs {
		t.Run(run.name, func(t *testing.T) {
			recs := run.recs()

			out, summary := ciRun(t, false, recs, 7)
			compareGolden(t, "testdata/live/ci-github-"+run.name+".golden", []byte(out))
			compareGolden(t, "testdata/live/ci-github-"+run.name+"-summary.golden", []byte(summary))
			groups, outside, notes := cisyntax.GitHub(t, out)
			if len(groups) < 2 {
				t.Errorf("%d groups, want one per finished task or resource operation", len(groups))
			}
			for _, g := range groups {
				if failedGlyph(g) {
					t.Errorf("a failure in a group: %q", g)
				}
			}
			failedRows := 0
			for _, l := range outside {
				if failedGlyph(l) {
					failedRows++
				}
			}
			if failedRows == 0 {
				t.Error("no failed part outside the groups")
			}
			if errLines(strings.Split(out, "\n")) != errLines(outside) {
				t.Error("an ERR line inside a group")
			}
			if fmt.Sprint(notes) != fmt.Sprint(run.errors) {
				t.Errorf("annotations:\n%q\nwant\n%q", notes, run.errors)
			}
			if !strings.HasPrefix(summary, "### ✗ Install") || !strings.Contains(summary, "**failed**") || !strings.Contains(summary, "| Failed | Status | Message |") {
				t.Errorf("step summary:\n%s", summary)
			}

			out, summary = ciRun(t, true, recs, 7)
			compareGolden(t, "testdata/live/ci-gitlab-"+run.name+".golden", []byte(out))
			if summary != "" {
				t.Errorf("a GitHub step summary under GitLab: %q", summary)
			}
			sections, outside := cisyntax.GitLab(t, out)
			if len(outside) > 0 {
				t.Errorf("lines outside the operation's section: %q", outside)
			}
			deepest, collapsed := 0, 0
			for _, s := range sections {
				deepest = max(deepest, s.Depth)
				if s.Collapsed {
					collapsed++
				}
				if s.Collapsed && failedGlyph(s.Header) {
					t.Errorf("a failed section starts collapsed: %q", s.Header)
				}
				for _, l := range s.Lines {
					if s.Collapsed && strings.HasPrefix(l, "ERR ") {
						t.Errorf("an ERR line in a collapsed section %q: %q", s.Header, l)
					}
				}
			}
			if deepest < run.sections || collapsed == 0 {
				t.Errorf("sections nested %d deep with %d collapsed, want %d deep and the successful ones collapsed", deepest, collapsed, run.sections)
			}
			if !strings.HasPrefix(sections[0].Header, "Install  resource::") || sections[0].Collapsed {
				t.Errorf("first section %+v, want the operation's, open", sections[0])
			}
		})
	}
}

// errLines counts the lines of records at level ERR.
func errLines(lines []string) (n int) {
	for _, l := range lines {
		if strings.HasPrefix(l, "ERR ") {
			n++
		}
	}
	return n
}

func TestCIDetect(t *testing.T) {
	for _, c := range []struct {
		mode   LiveMode
		isTerm bool
		env    map[string]string
		want   ciFlavor
	}{
		{LiveAuto, false, map[string]string{"GITHUB_ACTIONS": "true"}, ciGitHub},
		{LiveAuto, false, map[string]string{"GITLAB_CI": "true"}, ciGitLab},
		{LiveAuto, true, map[string]string{"GITHUB_ACTIONS": "true"}, ciNone}, // a terminal: the live area
		{LiveAuto, false, map[string]string{"CI": "true"}, ciNone},
		{LivePlain, false, map[string]string{"GITHUB_ACTIONS": "true"}, ciNone},
		{LiveCI, true, map[string]string{}, ciGitHub},
		{LiveCI, false, map[string]string{"GITLAB_CI": "true"}, ciGitLab},
	} {
		if got := detectCI(c.mode, c.isTerm, func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%v %v %v: %v, want %v", c.mode, c.isTerm, c.env, got, c.want)
		}
	}
}

// TestCIMemoryBounded: a task that logs 100,000 lines holds back its newest 1,000 (or 256 KiB),
// counts the rest in its group, and the heap does not grow with the lines.
func TestCIMemoryBounded(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "true")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	p := newCIPipeline(t, WithoutTime())
	out, e, lp, tp, record := p.out, p.e, p.lp, p.tp, p.recordInPlay(t)
	ctx, op := tp.Tracer("t").Start(context.Background(), "site.yml")
	record(ctx, progress.OperationStarted("Install"))
	tctx, task := tp.Tracer("t").Start(ctx, "task Print a lot")
	const lines = 100_000
	payload := strings.Repeat("x", 400)
	var before runtime.MemStats
	for i := range lines {
		record(tctx, progress.Event{Type: "ansible/TaskOutput", Details: map[string]any{"n": i, "text": payload}})
		if i%1000 == 999 {
			if err := e.ForceFlush(context.Background()); err != nil {
				t.Fatal(err)
			}
			if i == 9_999 {
				runtime.GC()
				runtime.ReadMemStats(&before)
			}
		}
	}
	if err := e.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	// 90,000 lines of 400+ bytes are 36 MB: held, the heap would grow by that much.
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 8<<20 {
		t.Errorf("the heap grew by %d bytes over 90,000 lines", grew)
	}
	task.End()
	record(ctx, progress.OperationCompleted("Install", 0))
	op.End()
	if err := lp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	groups, _, _ := cisyntax.GitHub(t, out.String())
	if len(groups) != 1 || !strings.Contains(groups[0], "task Print a lot") {
		t.Fatalf("groups %q, want the task's", groups)
	}
	body := out.String()
	body = body[strings.Index(body, "::group::"):strings.Index(body, "::endgroup::")]
	kept := strings.Count(body, "ansible/TaskOutput")
	m := regexp.MustCompile(`… ([0-9]+) earlier lines not kept`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no count of the lines not kept in the group")
	}
	dropped, _ := strconv.Atoi(m[1])
	if kept > ciMaxLines || len(body) > ciMaxBytes+4096 || kept+dropped != lines {
		t.Errorf("kept %d lines (%d bytes), dropped %d: want at most %d lines or %d bytes, the rest counted", kept, len(body), dropped, ciMaxLines, ciMaxBytes)
	}
	if !strings.Contains(body, "n=99999 ") {
		t.Error("the newest line was not kept")
	}
}

// TestCIEscapes: on GitHub, what a tool or a span says cannot issue a workflow command or break
// one: a program's line that starts with "::" is not read as a command, and '%', ':' and ',' in
// a group's title and an annotation reach the runner escaped, so that they read as they were.
func TestCIEscapes(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "true")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	p := newCIPipeline(t)
	out, e, lp, tp, record := p.out, p.e, p.lp, p.tp, p.recordInPlay(t)
	ctx, op := tp.Tracer("t").Start(context.Background(), "site.yml")
	record(ctx, progress.OperationStarted("Install"))
	_, ok := tp.Tracer("t").Start(ctx, "50% done, a:b %0A")
	ok.End()
	_, bad := tp.Tracer("t").Start(ctx, "copy, then check: 100%")
	bad.SetStatus(codes.Error, "disk: full, 100% %0D")
	bad.End()
	if _, err := e.Output().Write([]byte("::error::injected\n  ::add-mask::x\n")); err != nil {
		t.Fatal(err)
	}
	record(ctx, progress.OperationFailed("Install", "INTERNAL_ERROR", "a step failed"))
	op.End()
	if err := lp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	groups, _, notes := cisyntax.GitHub(t, out.String())
	if len(groups) != 1 || !strings.HasPrefix(groups[0], "✓ 50% done, a:b %0A  ") {
		t.Errorf("groups %q, want the title as the span named it", groups)
	}
	want := []cisyntax.Annotation{{Title: "Install › copy, then check: 100%", Message: "disk: full, 100% %0D"}}
	if fmt.Sprint(notes) != fmt.Sprint(want) {
		t.Errorf("annotations %q, want %q", notes, want)
	}
}

// TestCIGitLabInterleaved: two operations whose tasks end in turn. A section cannot end inside
// another, so each operation's sections are closed before the other's are opened, and opened
// again (as new sections) for its next task: every task's section sits in its own operation's and
// play's, the sections stay balanced, and none ends before it starts.
func TestCIGitLabInterleaved(t *testing.T) {
	t.Setenv("GITLAB_CI", "true")
	t.Setenv("GITHUB_ACTIONS", "")
	p := newCIPipeline(t)
	out, lp, rec, tracer := p.out, p.lp, p.rec, p.tp.Tracer("t")
	type run struct {
		ctx  context.Context
		op   trace.Span
		play context.Context
		env  progress.Envelope
	}
	start := func(name string) *run {
		r := &run{env: progress.Envelope{Resource: progress.Resource{Type: "Play", ID: name}}}
		r.ctx, r.op = tracer.Start(context.Background(), name)
		ev := progress.OperationStarted("Install " + name)
		ev.Envelope = r.env
		if err := rec.Record(r.ctx, ev); err != nil {
			t.Fatal(err)
		}
		r.play, _ = tracer.Start(r.ctx, "play of "+name)
		return r
	}
	task := func(r *run, name string, failed bool) {
		tctx, span := tracer.Start(r.play, name)
		_, host := tracer.Start(tctx, "host web-1")
		ev := progress.Event{Type: "ansible/TaskCompletedOnHost", Details: map[string]any{"taskName": name}}
		ev.Envelope = r.env
		if err := rec.Record(tctx, ev); err != nil {
			t.Fatal(err)
		}
		if failed {
			host.SetStatus(codes.Error, "it broke")
			span.SetStatus(codes.Error, "a host failed")
		}
		host.End()
		span.End()
	}
	end := func(r *run) {
		trace.SpanFromContext(r.play).End()
		ev := progress.OperationCompleted("Install "+r.env.Resource.ID, 0)
		ev.Envelope = r.env
		if err := rec.Record(r.ctx, ev); err != nil {
			t.Fatal(err)
		}
		r.op.End()
	}
	a, b := start("a.yml"), start("b.yml")
	task(a, "task a1", false)
	task(b, "task b1", true)
	task(a, "task a2", false)
	task(b, "task b2", false)
	end(a)
	end(b)
	if err := lp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	sections, outside := cisyntax.GitLab(t, out.String())
	if len(outside) > 0 {
		t.Errorf("lines outside any section: %q", outside)
	}
	seen := 0
	for _, s := range sections {
		name, ok := strings.CutPrefix(s.Header[strings.Index(s.Header, " ")+1:], "task ")
		if !ok {
			continue
		}
		seen++
		run := name[:1] // a or b
		if s.Parent == nil || s.Parent.Header != "play of "+run+".yml" || s.Parent.Parent == nil ||
			!strings.HasPrefix(s.Parent.Parent.Header, "Install "+run+".yml") {
			t.Errorf("section %q not inside its play's and operation's", s.Header)
		}
		if failedGlyph(s.Header) == s.Collapsed {
			t.Errorf("section %q collapsed=%v", s.Header, s.Collapsed)
		}
	}
	if seen != 4 {
		t.Errorf("%d task sections, want 4:\n%s", seen, out.String())
	}
}
