package main

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
)

// BenchmarkQueueFsync prices `fsync: true` on file_storage (progress.yaml,
// agent.yaml): the real extension, written as an exporter's persistent
// queue writes it, one transaction to enqueue a request (the request and
// the write index) and one to drop it once sent (the delete and the read
// index). A request is n records of progressBatch (about 1 KB each): 1 is
// an agent's unbatched driver export, 512 a gateway's batch. ns/event is
// wall time (fsync waits on the disk, not the CPU) per record.
func BenchmarkQueueFsync(b *testing.B) {
	for _, fsync := range []bool{false, true} {
		for _, n := range []int{1, 64, 512} {
			b.Run(fmt.Sprintf("fsync=%v/events=%d", fsync, n), func(b *testing.B) {
				req, err := (&plog.ProtoMarshaler{}).MarshalLogs(progressBatch(n))
				if err != nil {
					b.Fatal(err)
				}
				client := fileStorageClient(b, fsync)
				ctx := context.Background()
				i := 0
				b.SetBytes(int64(len(req)))
				for b.Loop() {
					key := strconv.Itoa(i)
					i++
					if err := client.Batch(ctx, storage.SetOperation(key, req), storage.SetOperation("wi", []byte(key))); err != nil {
						b.Fatal(err)
					}
					if err := client.Batch(ctx, storage.DeleteOperation(key), storage.SetOperation("ri", []byte(key))); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
			})
		}
	}
}

// fileStorageClient starts a file_storage extension on a temporary
// directory and returns an exporter's client of it.
func fileStorageClient(b *testing.B, fsync bool) storage.Client {
	b.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = b.TempDir()
	cfg.FSync = fsync
	ctx := context.Background()
	ext, err := f.Create(ctx, extensiontest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := ext.Start(ctx, nil); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ext.Shutdown(ctx) })
	client, err := ext.(storage.Extension).GetClient(ctx, component.KindExporter, component.MustNewIDWithName("kafka", "bench"), "logs")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = client.Close(ctx) })
	return client
}
