package propagation

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Ignition's request queue carries a request's context in the message body
// as a "logging_context" JSON object, e.g.
//
//	"logging_context": {"transactionId": "tx-1", "processId": "p-1", "tenantId": "t-1"}
//
// In: a key loses a "tracectx." or "x-tracectx-" prefix (any case) and is
// lower-cased; string values are taken as they are, numbers and booleans
// as their JSON text, null entries skipped; entries that break
// NormalizeKey, NormalizeValue or MaxValues, and object or array values,
// are left out. Out: the well-known keys get Ignition's camelCase spelling
// (transactionId, ...), others stay lower-case; every value is a string.
// In then out then in gives the same Values.

// LoggingContextField is the name of the body field holding the context.
const LoggingContextField = "logging_context"

// ParseLoggingContext returns the Values of a logging_context JSON object.
// JSON null or empty input gives empty Values. An input that is not a JSON
// object is an error and gives empty Values; otherwise the error, if any,
// joins one error per entry left out, and the valid entries are returned.
func ParseLoggingContext(data []byte) (Values, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || bytes.Equal(data, []byte("null")) {
		return Values{}, nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return Values{}, fmt.Errorf("propagation: logging_context is not a JSON object: %w", err)
	}
	m := make(map[string]string, len(raw))
	var errs []error
	for k, rv := range raw {
		val, ok, err := jsonScalar(rv)
		if err != nil {
			errs = append(errs, fmt.Errorf("key %q: %w", k, err))
			continue
		}
		if !ok {
			continue
		}
		m[stripKeyPrefix(k)] = val
	}
	v, err := NewValues(m)
	if err != nil {
		errs = append(errs, err)
	}
	return v, errors.Join(errs...)
}

// LoggingContext returns v as a logging_context object (see
// ParseLoggingContext for the key spelling).
func (v Values) LoggingContext() map[string]string {
	m := make(map[string]string, len(v.kv))
	for _, e := range v.kv {
		m[loggingContextKey(e.k)] = e.v
	}
	return m
}

// MarshalJSON encodes v as a logging_context object, so that Values can be
// the type of a message's logging_context field.
func (v Values) MarshalJSON() ([]byte, error) { return json.Marshal(v.LoggingContext()) }

// UnmarshalJSON decodes a logging_context object into v. Entries that break
// the rules are left out silently, so that one bad entry never fails the
// decoding of a whole message; call ParseLoggingContext to see them. Input
// that is not a JSON object or null is an error.
func (v *Values) UnmarshalJSON(data []byte) error {
	out, err := ParseLoggingContext(data)
	if err != nil && !isEntryError(err) {
		return err
	}
	*v = out
	return nil
}

// ContextWithLoggingContext returns ctx with the values of a logging_context
// object merged over its tracectx values, and the error of
// ParseLoggingContext.
func ContextWithLoggingContext(ctx context.Context, data []byte) (context.Context, error) {
	v, err := ParseLoggingContext(data)
	ctx = cmp.Or(ctx, context.Background())
	if v.Len() == 0 {
		return ctx, err
	}
	merged, merr := FromContext(ctx).merge(v.kv)
	return ContextWithValues(ctx, merged), errors.Join(err, merr)
}

// LoggingContextFromContext returns the tracectx values of ctx as a
// logging_context object, ready to be marshalled into a message body.
func LoggingContextFromContext(ctx context.Context) map[string]string {
	return FromContext(ctx).LoggingContext()
}

func isEntryError(err error) bool {
	return errors.Is(err, ErrInvalidKey) || errors.Is(err, ErrInvalidValue) || errors.Is(err, ErrTooManyValues)
}

// jsonScalar returns the string form of a JSON scalar; ok is false for null.
func jsonScalar(rv json.RawMessage) (s string, ok bool, err error) {
	rv = bytes.TrimSpace(rv)
	if len(rv) == 0 {
		return "", false, fmt.Errorf("%w: empty", ErrInvalidValue)
	}
	switch rv[0] {
	case 'n':
		return "", false, nil
	case '"':
		if err := json.Unmarshal(rv, &s); err != nil {
			return "", false, fmt.Errorf("%w: %v", ErrInvalidValue, err)
		}
		return s, true, nil
	case '{', '[':
		return "", false, fmt.Errorf("%w: a JSON object or array, not a scalar", ErrInvalidValue)
	default: // number, true, false: their JSON text
		return string(rv), true, nil
	}
}

func stripKeyPrefix(k string) string {
	for _, p := range []string{"tracectx.", HeaderPrefix} {
		if rest, ok := cutPrefixFold(k, p); ok {
			return rest
		}
	}
	return k
}

func loggingContextKey(k string) string {
	s := spelling(k)
	if s == k {
		return k
	}
	return strings.ToLower(s[:1]) + s[1:]
}
