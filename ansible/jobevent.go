package ansible

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
)

// jobEvent is one ansible-runner job event (the AWX job-event format),
// reduced to the fields the mapping reads, and the display text in
// "stdout", which only WithDisplay shows. Everything else is skipped by
// encoding/json (decodeEvent) and never kept. The json tags name the fields as
// runner writes them.
type jobEvent struct {
	UUID       string    `json:"uuid"`
	ParentUUID string    `json:"parent_uuid"`
	Counter    int64     `json:"counter"`
	Event      string    `json:"event"`
	Created    string    `json:"created"`
	PID        int       `json:"pid"`
	Stdout     string    `json:"stdout"`
	Data       eventData `json:"event_data"`
}

// eventData holds the event_data fields of every event type the mapping
// handles. Of a module result (res) only the keys of the reduced result
// are decoded.
type eventData struct {
	Playbook      string    `json:"playbook"`
	Play          string    `json:"play"`
	PlayUUID      string    `json:"play_uuid"`
	PlayPattern   string    `json:"play_pattern"`
	Name          string    `json:"name"`
	Task          string    `json:"task"`
	TaskUUID      string    `json:"task_uuid"`
	TaskAction    string    `json:"task_action"`
	TaskArgs      string    `json:"task_args"`
	Role          string    `json:"role"`
	IsConditional bool      `json:"is_conditional"`
	Host          string    `json:"host"`
	Start         string    `json:"start"`
	End           string    `json:"end"`
	IgnoreErrors  flexBool  `json:"ignore_errors"`
	Res           rawResult `json:"res"`
	VarName       string    `json:"varname"`

	// playbook_on_stats: host → count.
	OK        map[string]int `json:"ok"`
	Changed   map[string]int `json:"changed"`
	Failures  map[string]int `json:"failures"`
	Dark      map[string]int `json:"dark"`
	Skipped   map[string]int `json:"skipped"`
	Rescued   map[string]int `json:"rescued"`
	Ignored   map[string]int `json:"ignored"`
	Processed map[string]int `json:"processed"`
}

// Ansible's message for a no_log result, as ansible-runner writes it both in
// place of the result and, with ANSIBLE_DISPLAY_ARGS_TO_STDOUT, in place of
// the task's arguments.
const censoredMessage = "the output has been hidden due to the fact that 'no_log: true' was specified for this result"

// createdLayout is ansible-runner's "created" format: UTC without a zone.
const createdLayout = "2006-01-02T15:04:05.999999999"

// decodeEvent decodes a job-event line into ev, with one pass of
// encoding/json. A value of an unexpected type (a module's odd result, a
// stats count that is not a number) leaves its field unset and the rest
// of the event decoded; only a line that is not a JSON object is an
// error, meaning the line is not a job event.
func decodeEvent(line []byte, ev *jobEvent) error {
	*ev = jobEvent{}
	err := json.Unmarshal(line, ev)
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return nil // a field of the wrong type: skipped, the rest decoded
	}
	return err
}

// displayText is the display text ("stdout") of an event, decoded only for
// the rare events whose text the adapter keeps (warnings, errors).
func displayText(line []byte) string {
	var ev struct {
		Stdout string `json:"stdout"`
	}
	_ = json.Unmarshal(line, &ev)
	return ev.Stdout
}

// parseTime reads an event time: runner's zone-less UTC form, or RFC 3339
// as AWX's API serves it. The zero time means absent or unreadable.
func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	if t, err := time.ParseInLocation(createdLayout, s, time.UTC); err == nil {
		return t
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC()
	}
	return time.Time{}
}

// flexBool decodes a JSON boolean, and leniently the forms modules return
// in practice (1, "yes", "true"); anything else is false.
type flexBool bool

func (b *flexBool) UnmarshalJSON(p []byte) error {
	switch s := string(bytes.Trim(p, `"`)); strings.ToLower(s) {
	case "true", "yes", "on", "1":
		*b = true
	default:
		*b = false
	}
	return nil
}

// flexInt decodes an integer written as a number or a string; anything
// else leaves it unset.
type flexInt struct {
	v  int
	ok bool
}

func (n *flexInt) UnmarshalJSON(p []byte) error {
	s := string(bytes.Trim(p, `"`))
	if i, err := strconv.Atoi(s); err == nil {
		n.v, n.ok = i, true
	} else if f, err := strconv.ParseFloat(s, 64); err == nil && f == float64(int(f)) {
		n.v, n.ok = int(f), true
	}
	return nil
}

// rawResult is the part of a module result (event_data.res) that the
// mapping reads. Every other key, whatever it holds, is never decoded.
type rawResult struct {
	Msg         json.RawMessage `json:"msg"`
	Censored    string          `json:"censored"`
	Changed     flexBool        `json:"changed"`
	Failed      flexBool        `json:"failed"`
	Skipped     flexBool        `json:"skipped"`
	Unreachable flexBool        `json:"unreachable"`
	RC          flexInt         `json:"rc"`
	Results     []rawResult     `json:"results"`
	ItemLabel   json.RawMessage `json:"_ansible_item_label"`
	Item        json.RawMessage `json:"item"`
	Delegated   struct {
		Host string `json:"ansible_host"`
	} `json:"_ansible_delegated_vars"`
}

// taskResult is the reduced module result of the Ignition Ansible driver:
// msg, changed, failed, skipped, rc and results, and nothing else, so that
// no module output (stdout, invocation arguments, facts, diffs) leaves the
// driver. Keys are always present, null when Ansible gave no value, as the
// driver wrote them.
type taskResult struct {
	// Msg is the module's message: usually a string; a list or map when
	// the module returned one (kept structured so that redaction by key
	// still applies). For a no_log result it is Ansible's censored message.
	Msg any `json:"msg"`
	// Changed is the module's changed flag.
	Changed bool `json:"changed"`
	// Failed is true for failed results; Ansible does not put it in the
	// result, so it comes from the event type.
	Failed bool `json:"failed"`
	// Skipped is true for skipped results.
	Skipped bool `json:"skipped"`
	// RC is the command's return code, nil when the module has none.
	RC *int `json:"rc"`
	// Results holds one reduced result per loop item (empty without loop).
	Results []taskResult `json:"results"`
}

// reduce builds the reduced result. failed and skipped come from the event
// type; item results take their own flags.
func (r *rawResult) reduce(failed, skipped bool, depth int) taskResult {
	tr := taskResult{
		Changed: bool(r.Changed),
		Failed:  failed || bool(r.Failed),
		Skipped: skipped || bool(r.Skipped),
		Results: []taskResult{},
	}
	switch {
	case r.Censored != "":
		tr.Msg = r.Censored
	case len(r.Msg) > 0:
		tr.Msg = jsonValue(r.Msg)
	}
	if r.RC.ok {
		rc := r.RC.v
		tr.RC = &rc
	}
	if depth == 0 {
		for i := range r.Results {
			tr.Results = append(tr.Results, r.Results[i].reduce(false, false, depth+1))
		}
	}
	return tr
}

// itemLabel is the label Ansible shows for a loop item: the loop_control
// label when set, else the item itself. Structured items stay structured,
// so that the redactor sees their keys.
func (r *rawResult) itemLabel() any {
	if len(r.ItemLabel) > 0 {
		return jsonValue(r.ItemLabel)
	}
	if len(r.Item) > 0 {
		return jsonValue(r.Item)
	}
	return nil
}

func (r *rawResult) delegatedHost() any {
	if r.Delegated.Host == "" {
		return nil
	}
	return r.Delegated.Host
}

// jsonValue decodes a raw JSON value: a string directly, anything else
// through encoding/json (numbers as json.Number, kept exact).
func jsonValue(raw json.RawMessage) any {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil
	}
	return v
}
