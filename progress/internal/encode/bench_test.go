package encode

import (
	"testing"

	"github.com/progressotel/progressotel/progress/internal/redact"
)

// BenchmarkDetails is the encoder alone on a medium event's details (10
// leaves, two nested maps), for profiling the walk without the SDK.
func BenchmarkDetails(b *testing.B) {
	rules := redact.New(true, "password", "token", "secret")
	keys := NewKeyCache(&rules)
	d := map[string]any{
		"taskName": "Install packages", "itemLabel": "nginx", "hostName": "web-01", "delegatedHostName": "bastion-01",
		"taskResult": map[string]any{
			"msg": "All items completed", "changed": true, "failed": false, "rc": 0,
			"timing": map[string]any{"startMs": int64(1764432000123), "durationMs": int64(2841)},
		},
	}
	b.ReportAllocs()
	for b.Loop() {
		e := Get(keys, &rules, defaults)
		e.Details(d)
		Put(e)
	}
}
