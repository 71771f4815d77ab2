package main

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/batchpersignal"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// progressBatch is n records as a driver on an earlier release sent them:
// the wire attributes (flattened details, envelope, tracectx), the seed
// body with the nested details, a trace context; about 1 KB each, 8 runs
// interleaved.
func progressBatch(n int) plog.Logs {
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	sl.Scope().SetName("github.com/progressotel/progressotel/progress")
	for i := range n {
		r := sl.LogRecords().AppendEmpty()
		r.SetEventName("ansible/TaskCompletedOnHost")
		r.SetSeverityNumber(plog.SeverityNumberInfo)
		r.SetSeverityText("INFO")
		r.SetTimestamp(pcommon.Timestamp(1_795_000_000_000_000_000 + int64(i)*1_000_000))
		r.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, byte(i % 8)})
		r.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, byte(i)})
		a := r.Attributes()
		a.PutStr("progress.event_type", "ResourceTransitionProgressEvent")
		a.PutStr("progress.tenant", "tenant-a")
		a.PutInt("progress.sequence", int64(i/8+1))
		a.PutStr("progress.resource.type", "Assembly")
		a.PutStr("progress.resource.id", "asm-1")
		a.PutStr("progress.component.name", "ansible-driver")
		a.PutStr("progress.scope.tenant", "tenant-a")
		a.PutStr("tracectx.transactionid", "7d9b1c52-tx")
		a.PutStr("tracectx.processid", "proc-42")
		a.PutStr("progress.details.taskName", "install nginx")
		a.PutStr("progress.details.hostName", fmt.Sprintf("web%d.example.com", i%8))
		a.PutStr("progress.details.taskResult.msg", "All items completed")
		a.PutBool("progress.details.taskResult.changed", true)
		a.PutInt("progress.details.taskResult.rc", 0)
		body := r.Body().SetEmptyMap()
		body.PutStr("eventType", "ResourceTransitionProgressEvent")
		body.PutStr("progressEventType", "ansible/TaskCompletedOnHost")
		det := body.PutEmptyMap("details")
		det.PutStr("taskName", "install nginx")
		det.PutStr("hostName", fmt.Sprintf("web%d.example.com", i%8))
		tr := det.PutEmptyMap("taskResult")
		tr.PutStr("msg", "All items completed")
		tr.PutBool("changed", true)
		tr.PutInt("rc", 0)
		res := tr.PutEmptySlice("results")
		for j := range 3 {
			item := res.AppendEmpty().SetEmptyMap()
			item.PutStr("item", fmt.Sprintf("package-%d", j))
			item.PutStr("stdout", "Reading package lists... Building dependency tree... Done")
			item.PutInt("rc", 0)
		}
	}
	return ld
}

// cpuNow is the process's CPU time (user + system, all threads) in ns:
// steadier than wall time on a shared machine.
func cpuNow() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
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

// BenchmarkPartitionByTraceID prices partition_logs_by_trace_id: the kafka
// exporter splits each request per trace (batchpersignal.SplitLogs, a copy
// of every record) before marshalling. ns/op is per batch of 512.
func BenchmarkPartitionByTraceID(b *testing.B) {
	batch := progressBatch(512)
	b.Run("copy-only", func(b *testing.B) {
		loop(b, func() {
			ld := plog.NewLogs()
			batch.CopyTo(ld)
		})
	})
	b.Run("split-by-trace", func(b *testing.B) {
		loop(b, func() {
			ld := plog.NewLogs()
			batch.CopyTo(ld)
			if n := len(batchpersignal.SplitLogs(ld)); n != 8 {
				b.Fatalf("%d traces, want 8", n)
			}
		})
	})
}
