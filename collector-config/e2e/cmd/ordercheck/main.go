// Command ordercheck reads the progress topics of a Kafka cluster from the
// start and reports, per run (trace), whether its events arrived once,
// complete and in order: duplicates, reorderings (and by how much), gaps,
// and the losses the drivers reported (common/EventsDropped). It reads
// until no record has arrived for -idle, then prints the report.
//
//	go run ./cmd/ordercheck -brokers 127.0.0.1:9092 [-topics '^progress_events_.*'] [-idle 5s] [-all]
//
// A check that read nothing has checked nothing, so it fails. Exit status:
//
//	0  every run read is in order
//	1  some run is not in order (duplicates, reordering, gaps, split)
//	2  bad arguments
//	3  no broker answered
//	4  no topic matches -topics
//	5  the topics hold no message
//
// The check itself is package ordercheck; docs/collector.md ("Checking
// order and loss") describes it for consumers in other languages.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/progressotel/progressotel/collector-config/e2e/ordercheck"
)

// Exit statuses: see the package doc.
const (
	exitInOrder    = 0
	exitNotInOrder = 1
	exitUsage      = 2
	exitNoBroker   = 3
	exitNoTopic    = 4
	exitNoMessage  = 5
)

func main() {
	brokers := flag.String("brokers", "127.0.0.1:9092", "Kafka brokers, comma-separated")
	topics := flag.String("topics", "^progress_events_.*", "topics to read (a regular expression)")
	idle := flag.Duration("idle", 5*time.Second, "stop once no record has arrived for this long")
	limit := flag.Duration("timeout", 10*time.Minute, "stop after this long in any case")
	all := flag.Bool("all", false, "print every run, not only those out of order")
	flag.Parse()
	os.Exit(run(os.Stdout, os.Stderr, *brokers, *topics, *idle, *limit, *all))
}

func run(stdout, stderr io.Writer, brokers, topics string, idle, limit time.Duration, all bool) int {
	re, err := regexp.Compile(topics)
	if err != nil {
		fmt.Fprintln(stderr, "ordercheck: -topics:", err)
		return exitUsage
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.ConsumeRegex(), kgo.ConsumeTopics(topics),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		fmt.Fprintln(stderr, "ordercheck:", err)
		return exitUsage
	}
	defer cl.Close()
	// The broker and the topics first: an unreachable broker and a pattern
	// that matches nothing would otherwise read as an idle, empty cluster.
	ctx, cancel := context.WithTimeout(context.Background(), max(idle, 10*time.Second))
	matched, err := matchingTopics(ctx, cl, re)
	cancel()
	if err != nil {
		fmt.Fprintf(stderr, "ordercheck: no broker of %s answered: %v\n", brokers, err)
		return exitNoBroker
	}
	if len(matched) == 0 {
		fmt.Fprintf(stderr, "ordercheck: no topic on %s matches %q\n", brokers, topics)
		return exitNoTopic
	}
	var c ordercheck.Checker
	read := 0
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
				fmt.Fprintf(stderr, "ordercheck: %s/%d: %v\n", e.Topic, e.Partition, e.Err)
			}
		}
		read += n
		if n == 0 {
			break
		}
	}
	if read == 0 {
		fmt.Fprintf(stderr, "ordercheck: no message in %d topics matching %q within %s: %s\n", len(matched), topics, idle, strings.Join(matched, ", "))
		return exitNoMessage
	}
	rep := c.Report()
	if all {
		for _, r := range rep.Runs {
			fmt.Fprintln(stdout, r)
		}
		fmt.Fprintf(stdout, "%s; %d unsequenced, %d invalid\n", rep.Totals(), rep.Unsequenced, rep.Invalid)
	} else {
		fmt.Fprintln(stdout, rep)
	}
	if t := rep.Totals(); t.InOrder < t.Runs {
		return exitNotInOrder
	}
	return exitInOrder
}

// matchingTopics asks the cluster for its topics (a metadata request for
// all of them) and returns those re matches, internal topics left out.
func matchingTopics(ctx context.Context, cl *kgo.Client, re *regexp.Regexp) ([]string, error) {
	resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range resp.Topics {
		if t.Topic != nil && !t.IsInternal && re.MatchString(*t.Topic) {
			out = append(out, *t.Topic)
		}
	}
	slices.Sort(out)
	return out, nil
}
