package ansible

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/progressotel/progressotel/progress"
)

// jobEvent is one ansible-runner job event (the AWX job-event format),
// reduced to the fields the mapping reads and the display text ("stdout",
// for WithDisplay and Ansible's warnings). encoding/json skips the rest.
type jobEvent struct {
	UUID       string    `json:"uuid"`
	ParentUUID string    `json:"parent_uuid"`
	Event      string    `json:"event"`
	Created    string    `json:"created"`
	PID        int       `json:"pid"`
	Stdout     string    `json:"stdout"`
	StartLine  int       `json:"start_line"` // the lines of the stdout artifact the
	EndLine    int       `json:"end_line"`   // display text took, blank ones included
	Data       eventData `json:"event_data"`
}

// eventData holds the event_data fields of every event type the mapping
// handles; of a module result (res), the keys of the reduced result.
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

// censoredMessage is what runner writes in place of a no_log result and,
// with ANSIBLE_DISPLAY_ARGS_TO_STDOUT, of the task's arguments.
const censoredMessage = "the output has been hidden due to the fact that 'no_log: true' was specified for this result"

// createdLayout is ansible-runner's "created" format: UTC without a zone.
const createdLayout = "2006-01-02T15:04:05.999999999"

// decodeEvent decodes a job-event line into ev. A value of an unexpected
// type (a module's odd result, a stats count that is not a number) leaves
// its field unset; only a line that is not a JSON object is an error.
func decodeEvent(line []byte, ev *jobEvent) error {
	*ev = jobEvent{}
	err := json.Unmarshal(line, ev)
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return nil // a field of the wrong type: skipped, the rest decoded
	}
	return err
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
	s := strings.ToLower(string(bytes.Trim(p, `"`)))
	*b = s == "true" || s == "yes" || s == "on" || s == "1"
	return nil
}

// changedKey decodes a result's "changed" (as flexBool), which every
// result Ansible reports has: a result without it is one ansible-runner
// stripped (a result above its size limit arrives as {}).
type changedKey struct{ v, ok bool }

func (c *changedKey) UnmarshalJSON(p []byte) error {
	var b flexBool
	_ = b.UnmarshalJSON(p)
	c.v, c.ok = bool(b), true
	return nil
}

// ptr is the value for taskResult.Changed: nil when unknown. It points to
// one of two shared values, so that a result allocates nothing for it.
func (c changedKey) ptr(unknown bool) *bool {
	switch {
	case unknown:
		return nil
	case c.v:
		return &boolTrue
	}
	return &boolFalse
}

var boolTrue, boolFalse = true, false

// changed reports a result that says it changed something.
func (tr *taskResult) changed() bool { return tr.Changed != nil && *tr.Changed }

// stripped reports a result that ansible-runner left out (see changedKey).
func (r *rawResult) stripped() bool {
	return !r.Changed.ok && r.Censored == "" && len(r.Msg) == 0 && len(r.Results) == 0
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
// mapping reads; no other key is ever decoded.
type rawResult struct {
	Msg       json.RawMessage `json:"msg"`
	Censored  string          `json:"censored"`
	Changed   changedKey      `json:"changed"`
	Failed    flexBool        `json:"failed"`
	Skipped   flexBool        `json:"skipped"`
	RC        flexInt         `json:"rc"`
	Results   []rawResult     `json:"results"`
	ItemLabel json.RawMessage `json:"_ansible_item_label"`
	Item      json.RawMessage `json:"item"`
	Delegated struct {
		Host string `json:"ansible_host"`
	} `json:"_ansible_delegated_vars"`
}

// taskResult is the Ignition Ansible driver's reduced module result, so
// that no module output (stdout, invocation arguments, facts, diffs) leaves
// the driver. Keys are always present, null when Ansible gave no value.
type taskResult struct {
	// Msg is usually a string; a list or map stays structured, so that
	// redaction by key still applies. no_log: Ansible's censored message.
	Msg     any          `json:"msg"`
	Changed *bool        `json:"changed"` // nil: unknown (a result runner stripped)
	Failed  bool         `json:"failed"`  // also from the event type: Ansible leaves it out
	Skipped bool         `json:"skipped"` // also from the event type
	RC      *int         `json:"rc"`      // nil when the module has none
	Results []taskResult `json:"results"` // one per loop item, empty without a loop
}

// reduce builds the reduced result; failed and skipped come from the event
// type, item results take their own.
func (r *rawResult) reduce(failed, skipped bool, depth int) taskResult {
	tr := taskResult{
		Changed: r.Changed.ptr(!skipped && r.stripped()),
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
// label when set, else the item, structured ones structured (for redaction).
func (r *rawResult) itemLabel() any {
	if len(r.ItemLabel) > 0 {
		return jsonValue(r.ItemLabel)
	}
	return jsonValue(r.Item)
}

func (r *rawResult) delegatedHost() any {
	if r.Delegated.Host == "" {
		return nil
	}
	return r.Delegated.Host
}

// jsonValue decodes a raw JSON value, nil for none; numbers as json.Number,
// kept exact.
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

// parseTaskArgs turns runner's task_args ("k=v, k=v", each value in
// Python's str() form: lossy, as a value may contain ", k=") into the args
// map of TaskStarted and TaskStartedOnHost, without Ansible's internal
// _ansible_* keys; hidden reports a no_log task. Once a key is secret for
// the redactor, the rest of the string is its value, because where a secret
// ends cannot be known: nothing of it leaks as another key's value.
func parseTaskArgs(s string, red *progress.Redactor) (args map[string]any, hidden bool) {
	if s == censoredMessage {
		return nil, true
	}
	args = map[string]any{}
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			break // no key left: a fragment of the previous value
		}
		key, val := s[:eq], s[eq+1:]
		s = ""
		if next := nextArg(val); next >= 0 && (red == nil || !red.SecretKey(key)) {
			val, s = val[:next], val[next+2:]
		}
		if !strings.HasPrefix(key, "_ansible_") {
			args[key] = val
		}
	}
	return args, false
}

// nextArg returns the index of the ", " that starts the next "key=" in s,
// or -1. A key is an identifier, as Ansible module arguments are.
func nextArg(s string) int {
	for i := 0; ; {
		j := strings.Index(s[i:], ", ")
		if j < 0 {
			return -1
		}
		at := i + j
		k := at + 2
		for k < len(s) && isIdentByte(s[k], k == at+2) {
			k++
		}
		if k > at+2 && k < len(s) && s[k] == '=' {
			return at
		}
		i = at + 2
	}
}

func isIdentByte(c byte, first bool) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || !first && '0' <= c && c <= '9'
}
