package terraform

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

// message is one line of the machine-readable UI (-json), reduced to the
// fields the mapping reads. Terraform and OpenTofu write the same shape,
// but for the name of the version field.
type message struct {
	Level     string          `json:"@level"`
	Message   string          `json:"@message"`
	Timestamp string          `json:"@timestamp"`
	Type      string          `json:"type"`
	Tofu      string          `json:"tofu"`
	Terraform string          `json:"terraform"`
	UI        string          `json:"ui"`
	Hook      *hookMsg        `json:"hook"`
	Change    *changeMsg      `json:"change"`
	Changes   *ChangeSummary  `json:"changes"`
	Outputs   json.RawMessage `json:"outputs"`
	Diag      *Diagnostic     `json:"diagnostic"`
}

type resourceAddr struct {
	Addr         string          `json:"addr"`
	Module       string          `json:"module"`
	ResourceType string          `json:"resource_type"`
	ResourceKey  json.RawMessage `json:"resource_key"`
}

type hookMsg struct {
	Resource    resourceAddr `json:"resource"`
	Action      string       `json:"action"`
	IDKey       string       `json:"id_key"`
	IDValue     string       `json:"id_value"`
	Elapsed     float64      `json:"elapsed_seconds"`
	Provisioner string       `json:"provisioner"`
	Output      string       `json:"output"`
}

type changeMsg struct {
	Resource         resourceAddr  `json:"resource"`
	PreviousResource *resourceAddr `json:"previous_resource"`
	Action           string        `json:"action"`
	Reason           string        `json:"reason"`
	Importing        *struct {
		ID string `json:"id"`
	} `json:"importing"`
}

type outputMsg struct {
	Sensitive bool            `json:"sensitive"`
	Action    string          `json:"action"`
	Value     json.RawMessage `json:"value"`
}

// fastParse switches parseFast on; only the benchmarks turn it off.
var fastParse = true

// parse decodes line into m, which is reset first, and reports false for a
// line that is not a JSON object with a type or a message.
func (m *message) parse(line []byte) bool {
	*m = message{}
	if len(line) == 0 || line[0] != '{' {
		return false
	}
	if !fastParse || !parseFast(line, m) {
		// Whatever the fast path is not sure of, encoding/json decides.
		*m = message{}
		if err := json.Unmarshal(line, m); err != nil {
			return false
		}
	}
	return m.Type != "" || m.Message != ""
}

// time returns the message's @timestamp, or fallback when it has none or
// it cannot be read.
func (m *message) time(fallback time.Time) time.Time {
	if m.Timestamp != "" {
		if t, err := time.Parse(time.RFC3339Nano, m.Timestamp); err == nil {
			return t
		}
	}
	return fallback
}

// fields returns the resource fields of the details.
func (a *resourceAddr) fields() resourceFields {
	return resourceFields{Address: a.Addr, ResourceType: a.ResourceType, Module: a.Module,
		ResourceKey: resourceKey(a.ResourceKey)}
}

// resourceKey reads a resource_key: null, a count index or a for_each key.
func resourceKey(raw json.RawMessage) any {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return nil
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n
	}
	return string(raw)
}

// scrubValues replaces the sensitive values in every string field the
// mapping reads (free text gets more through scrubber.text later), so
// that a known secret cannot come back through an address, an id or a
// name.
func (m *message) scrubValues(s *scrubber) {
	if s.values == nil {
		return
	}
	for _, p := range []*string{&m.Level, &m.Message, &m.Type, &m.Tofu, &m.Terraform, &m.UI} {
		*p = s.value(*p)
	}
	if h := m.Hook; h != nil {
		h.Resource.scrubValues(s)
		for _, p := range []*string{&h.Action, &h.IDKey, &h.IDValue, &h.Provisioner, &h.Output} {
			*p = s.value(*p)
		}
	}
	if c := m.Change; c != nil {
		c.Resource.scrubValues(s)
		if c.PreviousResource != nil {
			c.PreviousResource.scrubValues(s)
		}
		c.Action, c.Reason = s.value(c.Action), s.value(c.Reason)
		if c.Importing != nil {
			c.Importing.ID = s.value(c.Importing.ID)
		}
	}
	if c := m.Changes; c != nil {
		c.Operation = s.value(c.Operation)
	}
	if d := m.Diag; d != nil {
		d.Severity, d.Address = s.value(d.Severity), s.value(d.Address)
		if d.Range != nil {
			d.Range.Filename = s.value(d.Range.Filename)
		}
	}
}

func (a *resourceAddr) scrubValues(s *scrubber) {
	for _, p := range []*string{&a.Addr, &a.Module, &a.ResourceType} {
		*p = s.value(*p)
	}
	if k, ok := resourceKey(a.ResourceKey).(string); ok && a.ResourceKey[0] == '"' && s.value(k) != k {
		a.ResourceKey, _ = json.Marshal(s.value(k))
	}
}
