package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/proto"
)

// runSink is the far end of the pipeline, in a process of its own so that
// its CPU is not counted as the driver's: a Kafka-protocol broker (kfake)
// that the collector exports to, and a consumer that counts the events in
// every message on the progress topics (records). GET /count on httpPort
// returns the count. common/EventsDropped events, which the driver emits
// when it lost records, are not counted: they were never sent by the load.
func runSink(kafkaPort, httpPort int) error {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(kafkaPort), kfake.ClusterID("progress-e2e-bench"),
		kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1))
	if err != nil {
		return fmt.Errorf("kfake: %w", err)
	}
	defer cluster.Close()
	addr := "127.0.0.1:" + strconv.Itoa(kafkaPort)

	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeRegex(), kgo.ConsumeTopics("^progress.*"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMinAge(100*time.Millisecond),
		kgo.MetadataMaxAge(300*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	var count atomic.Int64
	go func() {
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			fs.EachRecord(func(r *kgo.Record) { count.Add(records(r.Value)) })
		}
	}()

	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(httpPort))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, count.Load())
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.Serve(l); err != nil && err != http.ErrServerClosed {
		return err
	}
	return nil
}

// records is the number of load events in one Kafka message: a TNCO
// message (JSON, one event) from progress.yaml, or an OTLP LogsData
// (otlp_proto, the pass-through's encoding) of any number of records.
// common/EventsDropped events are not counted.
func records(value []byte) int64 {
	if len(value) > 0 && value[0] == '{' {
		if bytes.Contains(value, []byte(`"common/EventsDropped"`)) {
			return 0
		}
		return 1
	}
	var data logspb.LogsData
	if err := proto.Unmarshal(value, &data); err != nil {
		return 0
	}
	var n int64
	for _, rl := range data.GetResourceLogs() {
		for _, sl := range rl.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				if lr.GetEventName() != "common/EventsDropped" {
					n++
				}
			}
		}
	}
	return n
}
