package wire_test

import (
	"encoding/json"
	"testing"

	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/internal/testkit/wiretest"
	"github.com/progressotel/progressotel/progress"
	"github.com/progressotel/progressotel/progress/wire"
)

// decodedView is a Decoded as JSON, Extra as key=value strings.
type decodedView struct {
	EventType          string
	ProgressEventType  string               `json:",omitempty"`
	Details            map[string]any       `json:",omitempty"`
	Transition         *progress.Transition `json:",omitempty"`
	Component          progress.Component
	Resource           progress.Resource
	Scope              map[string]string `json:",omitempty"`
	ObservedGeneration int64             `json:",omitempty"`
	Tenant             string            `json:",omitempty"`
	Sequence           int64
	Truncated          bool
	TraceCtx           map[string]string `json:",omitempty"`
	Extra              []string          `json:",omitempty"`
}

func indent(t *testing.T, v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestGoldenDecoded: Decode on every record of the wire corpus.
func TestGoldenDecoded(t *testing.T) {
	wiretest.Check(t, "decoded", func(t *testing.T, r *sdklog.Record) string {
		d, err := wire.Decode(r)
		if err != nil {
			return "error: " + err.Error()
		}
		v := decodedView{
			EventType: d.EventType, ProgressEventType: d.ProgressEventType, Details: d.Details, Transition: d.Transition,
			Component: d.Component, Resource: d.Resource, Scope: d.Scope, ObservedGeneration: d.ObservedGeneration,
			Tenant: d.Tenant, Sequence: d.Sequence, Truncated: d.Truncated, TraceCtx: d.TraceCtx,
		}
		for _, kv := range d.Extra {
			v.Extra = append(v.Extra, string(kv.Key)+"="+kv.Value.String())
		}
		return indent(t, v)
	})
}
