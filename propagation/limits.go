package propagation

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on tracectx input. They bound what one request can add to every
// record it causes (MaxValues × MaxValueLen bytes at most) and keep header
// and log injection out of the pipeline.
const (
	// MaxValues is the most tracectx values a context carries. Extract keeps
	// the well-known keys first (transactionid, processid, taskid, tenantid,
	// driverrequestid, externalrequestid), then the others in byte order of
	// their names, and drops the rest.
	MaxValues = 32
	// MaxKeyLen is the longest key, in bytes, without the x-tracectx- prefix.
	MaxKeyLen = 64
	// MaxValueLen is the longest value, in bytes, after trimming the spaces
	// and tabs around it. Longer values are rejected, never cut: a cut id
	// would correlate with nothing, or with the wrong request.
	MaxValueLen = 256
)

// HeaderPrefix starts every tracectx header name. It is matched
// case-insensitively.
const HeaderPrefix = "x-tracectx-"

// Errors returned for bad input. Each error returned by this package wraps
// exactly one of them.
var (
	// ErrInvalidKey: a key is empty, longer than MaxKeyLen, or has a byte
	// other than ASCII letters, digits, '-', '_' and '.' (or does not
	// start with a letter or digit).
	ErrInvalidKey = errors.New("propagation: invalid tracectx key")
	// ErrInvalidValue: a value is empty, longer than MaxValueLen, not
	// UTF-8, or contains a control character (CR, LF, NUL, TAB inside the
	// value, DEL, C1 controls) or U+2028/U+2029.
	ErrInvalidValue = errors.New("propagation: invalid tracectx value")
	// ErrTooManyValues: adding a new key would exceed MaxValues.
	ErrTooManyValues = errors.New("propagation: too many tracectx values")
)

// wellKnown lists the keys Ignition knows, in the priority order Extract
// uses when it must drop values, with the spelling Ignition uses for them in
// header names and in logging_context.
var wellKnown = []struct{ key, spelling string }{
	{"transactionid", "TransactionId"},
	{"processid", "ProcessId"},
	{"taskid", "TaskId"},
	{"tenantid", "TenantId"},
	{"driverrequestid", "DriverRequestId"},
	{"externalrequestid", "ExternalRequestId"},
}

// rank orders keys for the cap: well-known keys first.
func rank(key string) int {
	for i, w := range wellKnown {
		if w.key == key {
			return i
		}
	}
	return len(wellKnown)
}

// spelling returns Ignition's mixed-case spelling of a well-known key, or
// key itself.
func spelling(key string) string {
	for _, w := range wellKnown {
		if w.key == key {
			return w.spelling
		}
	}
	return key
}

// NormalizeKey returns key lower-cased, or an error wrapping ErrInvalidKey.
// key is the name without the x-tracectx- or tracectx. prefix.
func NormalizeKey(key string) (string, error) {
	if key == "" {
		return "", fmt.Errorf("%w: empty", ErrInvalidKey)
	}
	if len(key) > MaxKeyLen {
		return "", fmt.Errorf("%w: %d bytes, limit %d", ErrInvalidKey, len(key), MaxKeyLen)
	}
	lower := true
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c >= 'A' && c <= 'Z':
			lower = false
		case (c == '-' || c == '_' || c == '.') && i > 0:
		default:
			return "", fmt.Errorf("%w: %q", ErrInvalidKey, key)
		}
	}
	if lower {
		return key, nil
	}
	return strings.ToLower(key), nil
}

// NormalizeValue returns value without surrounding spaces and tabs, or an
// error wrapping ErrInvalidValue. Bad values are rejected, not sanitized:
// see MaxValueLen.
func NormalizeValue(value string) (string, error) {
	value = strings.Trim(value, " \t")
	if value == "" {
		return "", fmt.Errorf("%w: empty", ErrInvalidValue)
	}
	if len(value) > MaxValueLen {
		return "", fmt.Errorf("%w: %d bytes, limit %d", ErrInvalidValue, len(value), MaxValueLen)
	}
	for i := 0; i < len(value); {
		c := value[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return "", fmt.Errorf("%w: control character %#x at byte %d", ErrInvalidValue, c, i)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(value[i:])
		if r == utf8.RuneError && n == 1 {
			return "", fmt.Errorf("%w: not UTF-8 at byte %d", ErrInvalidValue, i)
		}
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return "", fmt.Errorf("%w: control character %U at byte %d", ErrInvalidValue, r, i)
		}
		i += n
	}
	return value, nil
}
