package progress

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrInvalidEvent is wrapped by every validation error of this package.
var ErrInvalidEvent = errors.New("progress: invalid event")

// ValidationError is the one error of an event or transition that Record,
// RecordTransition or a Tracker refuses; it wraps ErrInvalidEvent. The
// refused record is not emitted (a malformed type or stream would break
// routing downstream) and is counted in Stats.Invalid and in the
// progress.events.invalid metric, whose reason attribute is Field.
//
// The rules:
//   - Event.Type, the progressEventType: "<group>/<name>", exactly one '/';
//     the group of lower-case ASCII letters, digits, '_' and '-', starting
//     with a letter; the name of ASCII letters, digits, '_', '-' and '.',
//     starting with a letter; at most 128 bytes in all.
//   - Transition.Stream: 1 to 63 bytes of lower-case ASCII letters, digits
//     and '_', starting with a letter, and none of the envelope's own keys
//     (details, component, resource, scope, tenant, sequence, event_type,
//     observed_generation, truncated) nor a top-level field of the JSON
//     formats (message, level, stream, attributes, transition,
//     logger_name).
//   - Transition.Status: not empty.
type ValidationError struct {
	// Field is what was refused: "type", "stream" or "status".
	Field string
	// Value is the refused value, cut to 64 bytes.
	Value string
	// Rule is the rule it breaks.
	Rule string
}

func (e *ValidationError) Error() string {
	switch e.Field {
	case "type":
		return "progress: invalid progressEventType " + strconv.Quote(e.Value) + ": " + e.Rule +
			` (want "<group>/<name>": group [a-z][a-z0-9_-]*, name [A-Za-z][A-Za-z0-9_.-]*, at most ` +
			strconv.Itoa(maxTypeLen) + " bytes)"
	case "stream":
		return "progress: invalid stream " + strconv.Quote(e.Value) + ": " + e.Rule +
			" (want [a-z][a-z0-9_]*, at most " + strconv.Itoa(maxStreamLen) + " bytes)"
	}
	return "progress: invalid " + e.Field + " " + strconv.Quote(e.Value) + ": " + e.Rule
}

// Unwrap lets errors.Is(err, ErrInvalidEvent) match.
func (e *ValidationError) Unwrap() error { return ErrInvalidEvent }

func invalid(field, value, rule string) *ValidationError {
	if len(value) > 64 {
		value = value[:64] + "..."
	}
	return &ValidationError{Field: field, Value: value, Rule: rule}
}

// maxTypeLen is the longest accepted progressEventType, in bytes.
const maxTypeLen = 128

// parseType checks a progressEventType against the rule of
// ValidationError and explains a rejection.
func parseType(s string) error {
	if s == "" {
		return invalid("type", s, "empty")
	}
	if len(s) > maxTypeLen {
		return invalid("type", s, "longer than "+strconv.Itoa(maxTypeLen)+" bytes")
	}
	slash := strings.IndexByte(s, '/')
	switch {
	case slash < 0:
		return invalid("type", s, "missing '/' between group and name")
	case strings.IndexByte(s[slash+1:], '/') >= 0:
		return invalid("type", s, "more than one '/'")
	}
	group, name := s[:slash], s[slash+1:]
	switch {
	case group == "":
		return invalid("type", s, "empty group")
	case name == "":
		return invalid("type", s, "empty name")
	case typeClass[group[0]]&typeGroupStart == 0:
		return invalid("type", s, "group must start with a lower-case letter")
	}
	for i := 1; i < len(group); i++ {
		if c := group[i]; typeClass[c]&typeGroup == 0 {
			return invalid("type", s, fmt.Sprintf("character %q not allowed in group", c))
		}
	}
	if typeClass[name[0]]&typeNameStart == 0 {
		return invalid("type", s, "name must start with a letter")
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; typeClass[c]&typeName == 0 {
			return invalid("type", s, fmt.Sprintf("character %q not allowed in name", c))
		}
	}
	return nil
}

// Byte classes of a progressEventType, for validType and parseType.
const (
	typeGroupStart = 1 << iota // [a-z]
	typeGroup                  // [a-z0-9_-]
	typeNameStart              // [A-Za-z]
	typeName                   // [A-Za-z0-9_.-]
)

var typeClass = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = typeGroupStart | typeGroup | typeNameStart | typeName
		t[c-'a'+'A'] = typeNameStart | typeName
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = typeGroup | typeName
	}
	t['_'], t['-'], t['.'] = typeGroup|typeName, typeGroup|typeName, typeName
	return t
}()

// validType is parseType's rule as one table-driven pass, for the hot
// path; parseType still explains a rejection. FuzzParseType checks that
// they agree.
func validType(s string) bool {
	if len(s) == 0 || len(s) > maxTypeLen {
		return false
	}
	slash := strings.IndexByte(s, '/')
	if slash <= 0 || slash == len(s)-1 {
		return false
	}
	if typeClass[s[0]]&typeGroupStart == 0 || typeClass[s[slash+1]]&typeNameStart == 0 {
		return false
	}
	for i := 1; i < slash; i++ {
		if typeClass[s[i]]&typeGroup == 0 {
			return false
		}
	}
	for i := slash + 2; i < len(s); i++ {
		if typeClass[s[i]]&typeName == 0 { // a second '/' ends here too
			return false
		}
	}
	return true
}

// maxStreamLen is the longest accepted stream name, in bytes.
const maxStreamLen = 63

// reservedStreams would collide with envelope attributes under "progress."
// or with the top-level fields of the JSON lines and the TNCO message.
var reservedStreams = map[string]bool{
	"details": true, "component": true, "resource": true, "scope": true,
	"tenant": true, "sequence": true, "event_type": true,
	"observed_generation": true, "truncated": true,
	"message": true, "level": true, "stream": true, "attributes": true,
	"transition": true, "logger_name": true,
}

// validateStream checks a transition stream name against the rule of
// ValidationError.
func validateStream(s string) error {
	switch {
	case s == "":
		return invalid("stream", s, "empty")
	case len(s) > maxStreamLen:
		return invalid("stream", s, "too long")
	case !isLower(s[0]):
		return invalid("stream", s, "must start with a lower-case letter")
	case reservedStreams[s]:
		return invalid("stream", s, "reserved for the envelope")
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isLower(c) && !isDigit(c) && c != '_' {
			return invalid("stream", s, fmt.Sprintf("character %q not allowed", c))
		}
	}
	return nil
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
