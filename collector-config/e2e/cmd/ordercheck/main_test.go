package main

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A check that read nothing fails, each reason with its own status and a
// message naming it; a check that read runs says whether they are in order.
func TestExitStatus(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()

	empty, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "progress_events_a"))
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	full, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "progress_events_a", "progress_events_b"))
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	produce(t, full.ListenAddrs()[0], "progress_events_a", "aa", 1, 2, 3)
	produce(t, full.ListenAddrs()[0], "progress_events_b", "bb", 1, 3, 2)

	for _, tc := range []struct {
		name, brokers, topics string
		want                  int
		say                   string // in the output
	}{
		{"no broker", closed, "^progress_events_.*", exitNoBroker, "no broker of " + closed + " answered"},
		{"no topic", empty.ListenAddrs()[0], "^progress_events_x.*", exitNoTopic, `no topic on ` + empty.ListenAddrs()[0] + ` matches "^progress_events_x.*"`},
		{"no message", empty.ListenAddrs()[0], "^progress_events_.*", exitNoMessage, "no message in 1 topics"},
		{"in order", full.ListenAddrs()[0], "^progress_events_a$", exitInOrder, "1 runs, 1 in order; 3 messages"},
		{"reordered", full.ListenAddrs()[0], "^progress_events_.*", exitNotInOrder, "2 runs, 1 in order; 6 messages, 0 duplicates, 1 reordered"},
		{"bad pattern", full.ListenAddrs()[0], "(", exitUsage, "-topics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			got := run(&out, &out, tc.brokers, tc.topics, time.Second, time.Minute, false)
			if got != tc.want || !strings.Contains(out.String(), tc.say) {
				t.Errorf("exit %d, want %d; output %q, want it to say %q", got, tc.want, out.String(), tc.say)
			}
		})
	}
}

func produce(t *testing.T, addr, topic, trace string, seqs ...int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, s := range seqs {
		v := fmt.Appendf(nil, `{"progressEventType":"ansible/TaskStarted","traceId":%q,"sequence":%d}`, trace, s)
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: topic, Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}
