// Command ordercheck reads the progress topics of a Kafka cluster from the
// start and reports, per run (trace), whether its events arrived once,
// complete and in order: duplicates, reorderings (and by how much), gaps,
// and the losses the drivers reported (common/EventsDropped). It reads
// until no record has arrived for -idle, then prints the report and exits
// 1 if any run is not in order.
//
//	go run ./cmd/ordercheck -brokers 127.0.0.1:9092 [-topics '^progress_events_.*'] [-idle 5s] [-all]
//
// The check itself is package ordercheck; docs/collector.md ("Checking
// order and loss") describes it for consumers in other languages.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/progressotel/progressotel/collector-config/e2e/ordercheck"
)

func main() {
	brokers := flag.String("brokers", "127.0.0.1:9092", "Kafka brokers, comma-separated")
	topics := flag.String("topics", "^progress_events_.*", "topics to read (a regular expression)")
	idle := flag.Duration("idle", 5*time.Second, "stop once no record has arrived for this long")
	limit := flag.Duration("timeout", 10*time.Minute, "stop after this long in any case")
	all := flag.Bool("all", false, "print every run, not only those out of order")
	flag.Parse()
	os.Exit(run(*brokers, *topics, *idle, *limit, *all))
}

func run(brokers, topics string, idle, limit time.Duration, all bool) int {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.ConsumeRegex(), kgo.ConsumeTopics(topics),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "ordercheck:", err)
		return 2
	}
	defer cl.Close()
	var c ordercheck.Checker
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), idle)
		fs := cl.PollFetches(ctx)
		cancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			n++
			c.Add(ordercheck.Record{Topic: r.Topic, Partition: r.Partition, Value: r.Value})
		})
		for _, e := range fs.Errors() {
			if e.Err != context.DeadlineExceeded {
				fmt.Fprintf(os.Stderr, "ordercheck: %s/%d: %v\n", e.Topic, e.Partition, e.Err)
			}
		}
		if n == 0 {
			break
		}
	}
	rep := c.Report()
	if all {
		for _, r := range rep.Runs {
			fmt.Println(r)
		}
		fmt.Printf("%s; %d unsequenced, %d invalid\n", rep.Totals(), rep.Unsequenced, rep.Invalid)
	} else {
		fmt.Println(rep)
	}
	if t := rep.Totals(); t.InOrder < t.Runs {
		return 1
	}
	return 0
}
