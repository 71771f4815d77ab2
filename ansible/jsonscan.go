package ansible

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// A small JSON scanner for job events. encoding/json validates a whole
// line before decoding it, then skips what it does not need byte by byte:
// on job events, whose bulk is display text and module output the mapping
// never reads, that was most of the adapter's CPU. This scanner walks an
// object's members and skips a value by jumping from quote to quote
// (bytes.IndexByte), so that unread strings cost almost nothing. Values
// that are read are decoded exactly; values that are skipped are only
// checked for balance. Keys are matched exactly, as ansible-runner writes
// them.

var errSyntax = errors.New("malformed JSON")

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at b[i] ('"').
func skipString(b []byte, i int) (int, error) {
	i++
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return 0, errSyntax
		}
		end := i + q
		// The quote ends the string unless an odd number of backslashes
		// precedes it.
		bs := 0
		for k := end - 1; k >= i && b[k] == '\\'; k-- {
			bs++
		}
		if bs%2 == 0 {
			return end + 1, nil
		}
		i = end + 1
	}
}

// skipValue returns the index after the value that starts at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errSyntax
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				j, err := skipString(b, i)
				if err != nil {
					return 0, err
				}
				i = j
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, errSyntax
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && !isSpace(b[j]) {
			j++
		}
		if j == i {
			return 0, errSyntax
		}
		return j, nil
	}
}

// members calls f for every member of the object in b, with the key's raw
// text (between its quotes) and the value's raw bytes. It stops at the
// first error, which it returns.
func members(b []byte, f func(key, val []byte) error) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errSyntax
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return errSyntax
		}
		end, err := skipString(b, i)
		if err != nil {
			return err
		}
		key := b[i+1 : end-1]
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return errSyntax
		}
		i = skipSpace(b, i+1)
		vend, err := skipValue(b, i)
		if err != nil {
			return err
		}
		if err := f(key, b[i:vend]); err != nil {
			return err
		}
		i = skipSpace(b, vend)
		if i >= len(b) {
			return errSyntax
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return nil
		default:
			return errSyntax
		}
	}
}

// elements calls f for every element of the array in b.
func elements(b []byte, f func(val []byte) error) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return errSyntax
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return nil
	}
	for {
		vend, err := skipValue(b, i)
		if err != nil {
			return err
		}
		if err := f(b[i:vend]); err != nil {
			return err
		}
		i = skipSpace(b, vend)
		if i >= len(b) {
			return errSyntax
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return nil
		default:
			return errSyntax
		}
	}
}

// str decodes a JSON string as encoding/json does (invalid UTF-8 becomes
// U+FFFD); any other value (null included) gives "".
func str(raw []byte) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner)
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func integer(raw []byte) int64 {
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// decodeEvent decodes a job-event line into ev, reading only the fields
// the mapping uses. An error means the line is not a job event.
func decodeEvent(line []byte, ev *jobEvent) error {
	*ev = jobEvent{}
	return members(line, func(key, val []byte) error {
		switch string(key) {
		case "uuid":
			ev.UUID = str(val)
		case "parent_uuid":
			ev.ParentUUID = str(val)
		case "counter":
			ev.Counter = integer(val)
		case "event":
			ev.Event = str(val)
		case "created":
			ev.Created = str(val)
		case "pid":
			ev.PID = int(integer(val))
		case "stdout":
			ev.Stdout = str(val)
		case "event_data":
			if val[0] == '{' {
				return decodeEventData(val, &ev.Data)
			}
		}
		return nil
	})
}

func decodeEventData(b []byte, d *eventData) error {
	return members(b, func(key, val []byte) error {
		switch string(key) {
		case "playbook":
			d.Playbook = str(val)
		case "play":
			d.Play = str(val)
		case "play_uuid":
			d.PlayUUID = str(val)
		case "play_pattern":
			d.PlayPattern = str(val)
		case "name":
			d.Name = str(val)
		case "task":
			d.Task = str(val)
		case "task_uuid":
			d.TaskUUID = str(val)
		case "task_action":
			d.TaskAction = str(val)
		case "task_args":
			d.TaskArgs = str(val)
		case "role":
			d.Role = str(val)
		case "is_conditional":
			d.IsConditional = string(val) == "true"
		case "host":
			d.Host = str(val)
		case "start":
			d.Start = str(val)
		case "end":
			d.End = str(val)
		case "ignore_errors":
			_ = d.IgnoreErrors.UnmarshalJSON(val)
		case "res":
			d.Res = val
		case "varname":
			d.VarName = str(val)
		case "ok":
			d.OK = counts(val)
		case "changed":
			d.Changed = counts(val)
		case "failures":
			d.Failures = counts(val)
		case "dark":
			d.Dark = counts(val)
		case "skipped":
			d.Skipped = counts(val)
		case "rescued":
			d.Rescued = counts(val)
		case "ignored":
			d.Ignored = counts(val)
		case "processed":
			d.Processed = counts(val)
		}
		return nil
	})
}

// counts decodes a stats map (host → count); anything else gives nil.
func counts(b []byte) map[string]int {
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	m := map[string]int{}
	_ = members(b, func(key, val []byte) error {
		host := str(append(append([]byte{'"'}, key...), '"'))
		var n flexInt
		_ = n.UnmarshalJSON(val)
		m[host] = n.v
		return nil
	})
	return m
}

// decodeResult reads the keys of a module result that the reduced result
// needs. A result that is not an object (or is absent, as on
// runner_on_skipped) gives the zero rawResult.
func decodeResult(res []byte) rawResult {
	var r rawResult
	if len(res) == 0 || res[0] != '{' {
		return r
	}
	_ = members(res, func(key, val []byte) error {
		switch string(key) {
		case "msg":
			r.Msg = val
		case "censored":
			r.Censored = str(val)
		case "changed":
			_ = r.Changed.UnmarshalJSON(val)
		case "failed":
			_ = r.Failed.UnmarshalJSON(val)
		case "skipped":
			_ = r.Skipped.UnmarshalJSON(val)
		case "unreachable":
			_ = r.Unreachable.UnmarshalJSON(val)
		case "rc":
			_ = r.RC.UnmarshalJSON(val)
		case "results":
			r.Results = r.Results[:0]
			_ = elements(val, func(item []byte) error {
				r.Results = append(r.Results, item)
				return nil
			})
		case "_ansible_item_label":
			r.ItemLabel = val
		case "item":
			r.Item = val
		case "_ansible_delegated_vars":
			_ = members(val, func(k, v []byte) error {
				if string(k) == "ansible_host" {
					r.DelegatedHost = str(v)
				}
				return nil
			})
		}
		return nil
	})
	return r
}
