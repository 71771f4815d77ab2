package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/progressotel/progressotel/progress"
)

// Many tenants record concurrently through one driver process, so that the
// collector sees their events interleaved in the same OTLP requests. Each
// tenant's topic holds exactly its own events; every record with a
// missing, unknown or forged tenant goes to the unrouted topic, and detail
// keys that mimic the tenant attribute do not steer the routing.
func TestTenantIsolation(t *testing.T) {
	const perTenant = 25
	tenants := []string{"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"}
	b := startBroker(t)
	cons := startConsumer(t, b.addr())
	col := newCollector(t, b.addr(), tenants, nil)
	col.start()
	d := newDriver(t, col.grpc, driverOpt{})

	var wg sync.WaitGroup
	for _, tenant := range tenants {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, span := d.tp.Tracer("driver").Start(context.Background(), "op-"+tenant)
			defer span.End()
			for i := 0; i < perTenant; i++ {
				err := d.rec.Record(ctx, progress.Event{
					Type:     "ansible/TaskStarted",
					Details:  map[string]any{"owner": tenant, "n": i},
					Envelope: progress.Envelope{Scope: map[string]string{"tenant": tenant}},
				})
				if err != nil {
					t.Error(err)
				}
			}
		}()
	}
	// Records that must land on the unrouted topic, each with a reason.
	unrouted := map[string]progress.Envelope{
		"missing":        {},
		"unknown":        {Scope: map[string]string{"tenant": "t99"}},
		"case":           {Scope: map[string]string{"tenant": "T1"}},
		"space":          {Scope: map[string]string{"tenant": "t1 "}},
		"prefix":         {Scope: map[string]string{"tenant": "t1-evil"}},
		"regex":          {Scope: map[string]string{"tenant": "t.*"}},
		"quote":          {Scope: map[string]string{"tenant": `t1" or true or "`}},
		"mimic-detail":   {},
		"mimic-nested":   {},
		"mimic-scope":    {Scope: map[string]string{"tenant ": "t1"}},
		"organization-x": {Scope: map[string]string{"organization": "t1x"}},
	}
	for reason, env := range unrouted {
		details := map[string]any{"owner": "unrouted", "reason": reason}
		switch reason {
		case "mimic-detail":
			details["progress.tenant"] = "t1" // progress.details.progress%2Etenant
			details["tenant"] = "t2"          // progress.details.tenant
		case "mimic-nested":
			details["progress"] = map[string]any{"tenant": "t3"} // progress.details.progress.tenant
		}
		if err := d.rec.Record(context.Background(), progress.Event{Type: "ansible/VarPrompt", Details: details, Envelope: env}); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	d.flush(t)

	total := len(tenants)*perTenant + len(unrouted)
	cons.waitFor(t, 90*time.Second, fmt.Sprintf("%d messages", total), func(m []message) bool { return len(m) >= total })
	time.Sleep(time.Second) // let any stray extra message show up
	msgs := cons.all()
	if len(msgs) != total {
		t.Errorf("got %d messages, want %d", len(msgs), total)
	}

	seen := map[string]map[float64]bool{}
	reasons := map[string]bool{}
	for _, m := range msgs {
		body := m.body(t)
		det, _ := body["details"].(map[string]any)
		owner, _ := det["owner"].(string)
		if owner == "unrouted" {
			if m.Topic != "progress_unrouted" {
				t.Errorf("record %v (tenant %v) went to %s, want progress_unrouted", det["reason"], body["tenant"], m.Topic)
			}
			if _, ok := m.Headers["tenantId"]; ok {
				t.Errorf("unrouted record %v carries a tenantId header %q", det["reason"], m.Headers["tenantId"])
			}
			reasons[det["reason"].(string)] = true
			continue
		}
		want := "progress_events_" + owner
		if m.Topic != want || m.Headers["tenantId"] != owner || body["tenant"] != owner {
			t.Errorf("cross delivery: owner %s on topic %s, header %q, tenant %v", owner, m.Topic, m.Headers["tenantId"], body["tenant"])
		}
		if seen[owner] == nil {
			seen[owner] = map[float64]bool{}
		}
		seen[owner][det["n"].(float64)] = true
	}
	for _, tenant := range tenants {
		if len(seen[tenant]) != perTenant {
			t.Errorf("tenant %s: %d distinct events on its topic, want %d", tenant, len(seen[tenant]), perTenant)
		}
	}
	for reason := range unrouted {
		if !reasons[reason] {
			t.Errorf("record %q did not reach progress_unrouted", reason)
		}
	}
}
