package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"testing"
)

// The OTLP JSON that the file exporter writes, one object per line, read
// back far enough for the tests: log records with their bodies, and spans
// with their ids.

type otlpKeyValue struct {
	Key   string       `json:"key"`
	Value otlpAnyValue `json:"value"`
}

type otlpAnyValue struct {
	StringValue *string          `json:"stringValue"`
	BoolValue   *bool            `json:"boolValue"`
	IntValue    *json.RawMessage `json:"intValue"` // a string or a number
	DoubleValue *float64         `json:"doubleValue"`
	ArrayValue  *struct {
		Values []otlpAnyValue `json:"values"`
	} `json:"arrayValue"`
	KvlistValue *struct {
		Values []otlpKeyValue `json:"values"`
	} `json:"kvlistValue"`
}

// raw returns the value as encoding/json would decode its JSON form.
func (v otlpAnyValue) raw() any {
	switch {
	case v.StringValue != nil:
		return *v.StringValue
	case v.BoolValue != nil:
		return *v.BoolValue
	case v.IntValue != nil:
		s := string(*v.IntValue)
		if uq, err := strconv.Unquote(s); err == nil {
			s = uq
		}
		f, _ := strconv.ParseFloat(s, 64)
		return f
	case v.DoubleValue != nil:
		return *v.DoubleValue
	case v.ArrayValue != nil:
		out := []any{}
		for _, e := range v.ArrayValue.Values {
			out = append(out, e.raw())
		}
		return out
	case v.KvlistValue != nil:
		out := map[string]any{}
		for _, kv := range v.KvlistValue.Values {
			out[kv.Key] = kv.Value.raw()
		}
		return out
	}
	return nil
}

type otlpLogRecord struct {
	EventName  string         `json:"eventName"`
	Body       otlpAnyValue   `json:"body"`
	Attributes []otlpKeyValue `json:"attributes"`
	TraceID    string         `json:"traceId"`
}

type otlpSpan struct {
	TraceID      string `json:"traceId"`
	SpanID       string `json:"spanId"`
	ParentSpanID string `json:"parentSpanId"`
	Name         string `json:"name"`
}

type otlpLine struct {
	ResourceLogs []struct {
		ScopeLogs []struct {
			Scope      struct{ Name string } `json:"scope"`
			LogRecords []otlpLogRecord       `json:"logRecords"`
		} `json:"scopeLogs"`
	} `json:"resourceLogs"`
	ResourceSpans []struct {
		Resource struct {
			Attributes []otlpKeyValue `json:"attributes"`
		} `json:"resource"`
		ScopeSpans []struct {
			Spans []otlpSpan `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`
}

// readOTLPFile returns every log record and span in an OTLP JSON lines
// file; a missing file reads as empty.
func readOTLPFile(t testing.TB, path string) (logs []otlpLogRecord, spans []otlpSpan, resources []map[string]any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var l otlpLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			continue // a line being written
		}
		for _, rl := range l.ResourceLogs {
			for _, sl := range rl.ScopeLogs {
				logs = append(logs, sl.LogRecords...)
			}
		}
		for _, rs := range l.ResourceSpans {
			res := map[string]any{}
			for _, kv := range rs.Resource.Attributes {
				res[kv.Key] = kv.Value.raw()
			}
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
				for range ss.Spans {
					resources = append(resources, res)
				}
			}
		}
	}
	return logs, spans, resources
}
