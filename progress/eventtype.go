package progress

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrInvalidEvent is wrapped by every validation error of this package.
var ErrInvalidEvent = errors.New("progress: invalid event")

// MaxTypeLen is the longest accepted progressEventType, in bytes.
const MaxTypeLen = 128

// EventTypeError describes a progressEventType that breaks the naming rule.
type EventTypeError struct {
	Value string // the offending value
	Rule  string // the rule it breaks
}

func (e *EventTypeError) Error() string {
	return "progress: invalid progressEventType " + strconv.Quote(e.Value) + ": " + e.Rule +
		` (want "<group>/<name>": group [a-z][a-z0-9_-]*, name [A-Za-z][A-Za-z0-9_.-]*, at most ` +
		strconv.Itoa(MaxTypeLen) + " bytes)"
}

// Unwrap lets errors.Is(err, ErrInvalidEvent) match.
func (e *EventTypeError) Unwrap() error { return ErrInvalidEvent }

// ParseType splits a progressEventType into its group and name.
//
// The rule: exactly one '/', a non-empty group of lower-case ASCII letters,
// digits, '_' and '-' that starts with a letter; a non-empty name of ASCII
// letters, digits, '_', '-' and '.' that starts with a letter; MaxTypeLen
// bytes in all. The error is an *EventTypeError naming the value and rule.
func ParseType(s string) (group, name string, err error) {
	if s == "" {
		return "", "", &EventTypeError{s, "empty"}
	}
	if len(s) > MaxTypeLen {
		return "", "", &EventTypeError{truncateForError(s), "longer than " + strconv.Itoa(MaxTypeLen) + " bytes"}
	}
	slash := -1
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			if slash >= 0 {
				return "", "", &EventTypeError{s, "more than one '/'"}
			}
			slash = i
		}
	}
	if slash < 0 {
		return "", "", &EventTypeError{s, "missing '/' between group and name"}
	}
	group, name = s[:slash], s[slash+1:]
	if group == "" {
		return "", "", &EventTypeError{s, "empty group"}
	}
	if name == "" {
		return "", "", &EventTypeError{s, "empty name"}
	}
	if !isLower(group[0]) {
		return "", "", &EventTypeError{s, "group must start with a lower-case letter"}
	}
	for i := 1; i < len(group); i++ {
		c := group[i]
		if !isLower(c) && !isDigit(c) && c != '_' && c != '-' {
			return "", "", &EventTypeError{s, fmt.Sprintf("character %q not allowed in group", c)}
		}
	}
	if !isLetter(name[0]) {
		return "", "", &EventTypeError{s, "name must start with a letter"}
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if !isLetter(c) && !isDigit(c) && c != '_' && c != '-' && c != '.' {
			return "", "", &EventTypeError{s, fmt.Sprintf("character %q not allowed in name", c)}
		}
	}
	return group, name, nil
}

// MaxStreamLen is the longest accepted stream name, in bytes.
const MaxStreamLen = 63

// reservedStreams would collide with envelope attributes under "progress."
// or with the top-level fields of the JSON lines and the TNCO message.
var reservedStreams = map[string]bool{
	"details": true, "component": true, "resource": true, "scope": true,
	"tenant": true, "sequence": true, "event_type": true,
	"observed_generation": true, "truncated": true,
	"message": true, "level": true, "stream": true, "attributes": true,
	"transition": true, "logger_name": true,
}

// ValidateStream checks a transition stream name: 1 to MaxStreamLen bytes
// of lower-case ASCII letters, digits and '_', starting with a letter, and
// not one of the envelope's own keys (details, component, resource, scope,
// tenant, sequence, event_type, observed_generation, truncated) nor a
// top-level field of the JSON formats (message, level, stream, attributes,
// transition, logger_name).
func ValidateStream(s string) error {
	bad := func(rule string) error {
		return fmt.Errorf("%w: stream %q: %s (want [a-z][a-z0-9_]*, at most %d bytes)", ErrInvalidEvent, truncateForError(s), rule, MaxStreamLen)
	}
	switch {
	case s == "":
		return bad("empty")
	case len(s) > MaxStreamLen:
		return bad("too long")
	case !isLower(s[0]):
		return bad("must start with a lower-case letter")
	case reservedStreams[s]:
		return bad("reserved for the envelope")
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isLower(c) && !isDigit(c) && c != '_' {
			return bad(fmt.Sprintf("character %q not allowed", c))
		}
	}
	return nil
}

func truncateForError(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

func isLower(c byte) bool  { return c >= 'a' && c <= 'z' }
func isLetter(c byte) bool { return isLower(c) || (c >= 'A' && c <= 'Z') }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
