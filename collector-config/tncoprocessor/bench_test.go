package tncoprocessor

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// benchBatch is a batch of n records as a driver on this library sends
// them: the medium event of the end-to-end benchmark, its message as the
// body.
func benchBatch(b *testing.B, n int) plog.Logs {
	driver := newProcessor(b, unredacted(b), true)
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	sl.Scope().SetName(scopeName)
	for i := range n {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetEventName("ansible/TaskCompletedOnHost")
		lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Date(2026, 11, 29, 10, 0, 5, i*1000, time.UTC)))
		lr.SetSeverityText("INFO")
		lr.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5})
		lr.SetSpanID(pcommon.SpanID{9, 8})
		a := lr.Attributes()
		a.PutStr(attrEventType, eventType)
		a.PutStr("progress.component.name", "ansible-driver")
		a.PutStr("progress.component.version", "3.2.1")
		a.PutStr("progress.resource.type", "AssemblyInstance")
		a.PutStr("progress.resource.id", "asm-e2e-0")
		a.PutStr("progress.scope.organization", "acme")
		a.PutStr(attrTenant, "acme")
		a.PutInt(attrSequence, int64(i+1))
		details := pcommon.NewMap()
		details.PutStr("taskName", "Install packages")
		details.PutStr("itemLabel", "nginx")
		details.PutStr("hostName", "web-0")
		details.PutStr("delegatedHostName", "bastion-01")
		tr := details.PutEmptyMap("taskResult")
		tr.PutStr("msg", "All items completed")
		tr.PutBool("changed", true)
		tr.PutBool("failed", false)
		tr.PutInt("rc", 0)
		tm := tr.PutEmptyMap("timing")
		tm.PutInt("startMs", 1764432000123)
		tm.PutInt("durationMs", int64(i%5000))
		for k, v := range details.All() {
			if v.Type() != pcommon.ValueTypeMap {
				v.CopyTo(a.PutEmpty("progress.details." + k))
			}
		}
		for k, v := range tr.All() {
			if v.Type() != pcommon.ValueTypeMap {
				v.CopyTo(a.PutEmpty("progress.details.taskResult." + k))
			}
		}
		a.PutInt("progress.details.taskResult.timing.startMs", 1764432000123)
		a.PutInt("progress.details.taskResult.timing.durationMs", int64(i%5000))
		msg := driverMessage(b, driver, lr, details)
		lr.Body().SetEmptyBytes().FromRaw(msg)
	}
	return ld
}

// BenchmarkTNCO: one op is one record of a 512-record batch, through the
// fast path and through the stock processors (what progress.yaml ran
// before the fast path).
func BenchmarkTNCO(b *testing.B) {
	cfg := shippedConfig(b)
	batch := benchBatch(b, 512)
	for _, c := range []struct {
		name      string
		stockOnly bool
	}{{"fast", false}, {"stock", true}} {
		b.Run(c.name, func(b *testing.B) {
			p := newProcessor(b, cfg, c.stockOnly)
			in := plog.NewLogs()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += 512 {
				b.StopTimer()
				batch.CopyTo(in)
				b.StartTimer()
				if _, err := p.processLogs(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
