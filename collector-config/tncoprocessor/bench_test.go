package tncoprocessor

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/progressotel/progressotel/tncomessage"
)

// benchBatch is a batch of n records as a driver on this library sends
// them: the medium event of the end-to-end benchmark, no body.
func benchBatch(n int) plog.Logs {
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
		a.PutStr(tncomessage.AttrEventType, tncomessage.EventType)
		a.PutStr("progress.component.name", "ansible-driver")
		a.PutStr("progress.component.version", "3.2.1")
		a.PutStr("progress.resource.type", "AssemblyInstance")
		a.PutStr("progress.resource.id", "asm-e2e-0")
		a.PutStr("progress.scope.organization", "acme")
		a.PutStr(tncomessage.AttrTenant, "acme")
		a.PutInt(tncomessage.AttrSequence, int64(i+1))
		a.PutStr("progress.details.taskName", "Install packages")
		a.PutStr("progress.details.itemLabel", "nginx")
		a.PutStr("progress.details.hostName", "web-0")
		a.PutStr("progress.details.delegatedHostName", "bastion-01")
		a.PutStr("progress.details.taskResult.msg", "All items completed")
		a.PutBool("progress.details.taskResult.changed", true)
		a.PutBool("progress.details.taskResult.failed", false)
		a.PutInt("progress.details.taskResult.rc", 0)
		a.PutInt("progress.details.taskResult.timing.startMs", 1764432000123)
		a.PutInt("progress.details.taskResult.timing.durationMs", int64(i%5000))
	}
	return ld
}

// BenchmarkTNCO: one op is one record of a 512-record batch: redact,
// build the message, drop the attributes.
func BenchmarkTNCO(b *testing.B) {
	p := newProcessor(b, shippedConfig(b))
	batch := benchBatch(512)
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
}
