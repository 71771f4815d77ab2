package prettyexporter

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/internal/base/outcome"
	"github.com/progressotel/progressotel/progress"
)

// bigModel is a model holding about 1,000 nodes, as a large run has
// them: a Terraform plan of 1,000 resources with a few running, or an
// Ansible task running on 1,000 hosts.
func bigModel(b *testing.B, kind string) (*testView, time.Time) {
	p := newPipeline(b)
	ctx, span := p.tp.Tracer("bench").Start(p.ctx, "Install")
	defer span.End()
	at := t0
	rec := func(e progress.Event) {
		at = at.Add(time.Millisecond)
		e.Time = at
		if err := p.rec.Record(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	rec(progress.OperationStarted("Install"))
	tracer := p.tp.Tracer("bench")
	switch kind {
	case "terraform":
		// 1,000 resources as spans under the run: 992 failed (their
		// rows stay until the operation ends; created ones would
		// collapse), 8 running.
		for i := range 1000 {
			_, s := tracer.Start(ctx, fmt.Sprintf("create aws_instance.web[%d]", i), trace.WithTimestamp(at))
			if i >= 8 {
				s.SetAttributes(attribute.String(outcome.Key, outcome.Failed))
				s.SetStatus(codes.Error, "quota exceeded")
				s.End(trace.WithTimestamp(at.Add(time.Second)))
			}
		}
		rec(progress.Progress(992, 1000, "resources"))
	case "ansible":
		pctx, _ := tracer.Start(ctx, "play fleet", trace.WithTimestamp(at))
		tctx, _ := tracer.Start(pctx, "task Upgrade the agent", trace.WithTimestamp(at))
		for i := range 1000 {
			tracer.Start(tctx, fmt.Sprintf("host host-%04d", i), trace.WithTimestamp(at))
		}
	}
	m := testModel(false)
	replay(m, p.kept.Steps())
	if m.nodes < 1000 {
		b.Fatalf("%d nodes", m.nodes)
	}
	return m, at
}

// BenchmarkLiveFrame: the cost of one frame of a model of about 1,000
// nodes on a 120×40 terminal (the terminal goroutine draws at most 10 a
// second).
func BenchmarkLiveFrame(b *testing.B) {
	for _, kind := range []string{"terraform", "ansible"} {
		b.Run("nodes=1000/"+kind, func(b *testing.B) {
			m, at := bigModel(b, kind)
			var f liveFrame
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				m.frame(&f, at.Add(time.Duration(i)*time.Millisecond), 120, 40, true)
			}
			if f.Len() != 39 {
				b.Fatalf("%d rows", f.Len())
			}
		})
	}
}

// BenchmarkLiveSnapshot: what the terminal goroutine does under the model's lock before a frame of
// a model of about 1,000 nodes: the copy the renderer draws from, outside the lock.
func BenchmarkLiveSnapshot(b *testing.B) {
	for _, kind := range []string{"terraform", "ansible"} {
		b.Run("nodes=1000/"+kind, func(b *testing.B) {
			m, _ := bigModel(b, kind)
			var s liveSnap
			b.ReportAllocs()
			for b.Loop() {
				m.snapshot(&s)
			}
			if len(s.nodes) < 1000 {
				b.Fatalf("%d nodes", len(s.nodes))
			}
		})
	}
}

// runBatches returns copies of a real Ansible run (the site playbook: its
// 81 records and the adapter's spans, in the order the SDK gave them),
// each copy in a trace of its own, so that every batch meets operations
// the exporter has not seen (more copies than the model keeps trees and
// remembers ended ones).
func runBatches(b *testing.B) [][]step {
	steps := ansibleRecords(b, "../ansible/testdata/streams/site.jsonl")
	out := make([][]step, 256)
	for i := range out {
		var tid trace.TraceID
		binary.BigEndian.PutUint64(tid[:], uint64(i+1))
		batch := make([]step, len(steps))
		for j, s := range steps {
			if s.rec != nil {
				r := s.rec.Clone()
				r.SetTraceID(tid)
				s.rec = &r
			} else {
				s.sc = s.sc.WithTraceID(tid)
				if s.parent.IsValid() {
					s.parent = s.parent.WithTraceID(tid)
				}
			}
			batch[j] = s
		}
		out[i] = batch
	}
	return out
}

func records(steps []step) []sdklog.Record {
	var out []sdklog.Record
	for _, s := range steps {
		if s.rec != nil {
			out = append(out, *s.rec)
		}
	}
	return out
}

// BenchmarkLiveExport: the cost per record of a real run, the live view
// (records and spans as Setup gives them, through LogProcessor and
// SpanProcessor: only the model is updated; the goroutine draws apart)
// and its plain mode, next to the pretty exporter's Export of the same
// records, all writing to io.Discard. The ratio to pretty is in
// BENCHMARKS.md.
func BenchmarkLiveExport(b *testing.B) {
	batches := runBatches(b)
	recs := make([][]sdklog.Record, len(batches))
	for i := range batches {
		recs[i] = records(batches[i])
	}
	per := float64(len(recs[0]))
	b.Run("exporter=pretty", func(b *testing.B) {
		e, _ := New(WithWriter(io.Discard), WithColor(ColorAlways))
		defer e.Shutdown(context.Background())
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if err := e.Export(context.Background(), recs[i%len(recs)]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/per, "ns/record")
	})
	live := func(b *testing.B, mode LiveMode) {
		e, _ := NewLive(WithWriter(io.Discard), WithLiveMode(mode), WithColor(ColorAlways),
			WithTerminalSize(func() (int, int) { return 120, 40 }))
		defer e.Shutdown(context.Background())
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if err := e.feed(batches[i%len(batches)]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/per, "ns/record")
	}
	b.Run("exporter=live", func(b *testing.B) { live(b, LiveTerminal) })
	b.Run("exporter=live-plain", func(b *testing.B) { live(b, LivePlain) })
}

// BenchmarkLiveSpan: what a driver pays per span with the live view's
// span processor registered (start, end, a row made and collapsed), next
// to the same span without it, on the real SDK. The goroutine drawing the
// view runs apart; the ratio is what matters.
func BenchmarkLiveSpan(b *testing.B) {
	run := func(b *testing.B, opts ...sdktrace.TracerProviderOption) {
		tp := sdktrace.NewTracerProvider(opts...)
		defer tp.Shutdown(context.Background())
		tracer := tp.Tracer("bench")
		ctx, op := tracer.Start(context.Background(), "Install")
		defer op.End()
		b.ReportAllocs()
		for b.Loop() {
			_, s := tracer.Start(ctx, "task Install nginx")
			s.End()
		}
	}
	b.Run("view=none", func(b *testing.B) { run(b) })
	b.Run("view=live", func(b *testing.B) {
		e, _ := NewLive(WithWriter(io.Discard), WithLiveMode(LiveTerminal), WithTerminalSize(func() (int, int) { return 120, 40 }))
		defer e.Shutdown(context.Background())
		run(b, sdktrace.WithSpanProcessor(e.SpanProcessor()))
	})
}
