package ansible

import (
	"strings"

	"github.com/progressotel/progressotel/progress"
)

// parseTaskArgs turns ansible-runner's task_args string into the args map
// of TaskStarted and TaskStartedOnHost.
//
// Runner writes the task's arguments only when ANSIBLE_DISPLAY_ARGS_TO_STDOUT
// is true (Run sets it), as "k=v, k=v" with each value in Python's str()
// form, untemplated; for a no_log task it writes Ansible's censored message
// instead. The format is lossy: a value may itself contain ", k=". So the
// split is conservative: once a key is a secret key for the redactor, all
// the rest of the string is taken as its value, because where a secret
// value ends cannot be known. Redaction then hides it whole; nothing of it
// can leak as another key's value. Ansible's internal keys (_ansible_*) are
// left out.
//
// hidden reports a no_log task. An empty string gives an empty map.
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
		key := s[:eq]
		rest := s[eq+1:]
		var val string
		if red != nil && red.SecretKey(key) {
			val, s = rest, ""
		} else if next := nextArg(rest); next >= 0 {
			val, s = rest[:next], rest[next+2:]
		} else {
			val, s = rest, ""
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
