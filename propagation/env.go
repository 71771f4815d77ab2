package propagation

import (
	"os"
	"strings"

	"go.opentelemetry.io/contrib/propagators/envcar"
	otelprop "go.opentelemetry.io/otel/propagation"
)

// EnvPrefix starts the environment variable name of every tracectx value:
// what the OpenTelemetry environment-variable carrier makes of
// "x-tracectx-", so that a key without '-', '.' or '_' (every key Ignition
// knows) has the same variable name in every tool that follows that
// specification: X_TRACECTX_TRANSACTIONID.
const EnvPrefix = "X_TRACECTX_"

// EnvName returns the name of the environment variable that carries the
// tracectx key (without the x-tracectx- prefix, any case): EnvPrefix then
// the key upper-cased, with '-', '.' and '_' written as '_' and their two
// hexadecimal digits ("_2D", "_2E", "_5F"), as percent-encoding does with
// '%'.
//
//	transactionid   X_TRACECTX_TRANSACTIONID
//	request-id      X_TRACECTX_REQUEST_2DID
//	driver_req.id   X_TRACECTX_DRIVER_5FREQ_2EID
//
// The error wraps ErrInvalidKey for a key NormalizeKey rejects. EnvKey is
// the inverse.
func EnvName(key string) (string, error) {
	k, err := NormalizeKey(key)
	if err != nil {
		return "", err
	}
	return EnvPrefix + strings.ToUpper(envEscaper.Replace(k)), nil
}

// envEscaper and envUnescaper write and read EnvName's escapes of '-',
// '.' and '_', the only bytes NormalizeKey accepts beside letters and
// digits.
var (
	envEscaper   = strings.NewReplacer("-", "_2D", ".", "_2E", "_", "_5F")
	envUnescaper = strings.NewReplacer("_2D", "-", "_2E", ".", "_5F", "_")
)

// EnvKey returns the tracectx key (lower-cased, as NormalizeKey returns it)
// carried by the environment variable name, and false when name does not
// start with EnvPrefix or does not decode to a valid key. It is the inverse
// of EnvName: EnvKey(EnvName(k)) is NormalizeKey(k) for every valid key.
//
// Names written by hand or by another tool decode too: an '_' that does not
// start one of the three escapes is an '_' of the key, so
// X_TRACECTX_DRIVER_REQUEST_ID carries driver_request_id. Lower-case
// letters are not accepted: the specification's names are upper-case.
func EnvKey(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, EnvPrefix)
	if !ok || strings.ContainsFunc(rest, func(c rune) bool { return (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' }) {
		return "", false
	}
	k, err := NormalizeKey(envUnescaper.Replace(rest)) // lower-cases
	if err != nil {
		return "", false
	}
	return k, true
}

// EnvCarrier is a TextMapCarrier over environment variables, following the
// OpenTelemetry specification of environment variables as carriers
// (go.opentelemetry.io/contrib/propagators/envcar): traceparent travels as
// TRACEPARENT, tracestate as TRACESTATE, baggage as BAGGAGE. tracectx
// headers, whose names envcar would fold together (x-tracectx-a-b, -a.b
// and -a_b would all become X_TRACECTX_A_B), travel under EnvName's
// reversible spelling.
//
// Get and Keys read the current process's environment, as envcar does
// (extract once at start-up). Set writes through SetEnv, so that Inject
// fills a child process's environment without touching the current one:
//
//	env := os.Environ()
//	propagation.Default().Inject(ctx, propagation.EnvCarrier{SetEnv: func(k, v string) {
//		env = append(env, k+"="+v)
//	}})
//	cmd.Env = env
//
// Environment variables can be read by other processes of the same user:
// do not put secrets in tracectx or baggage.
type EnvCarrier struct {
	// SetEnv receives each injected variable, its name already spelt for
	// the environment. Nil: Set does nothing (an extract-only carrier).
	SetEnv func(name, value string)
}

var _ otelprop.TextMapCarrier = EnvCarrier{}

// Get returns the value of the environment variable carrying key, "" when
// it is unset or key is a tracectx header with an invalid key.
func (c EnvCarrier) Get(key string) string {
	if k, ok := tracectxHeader(key); ok {
		return lookupTraceCtx(k)
	}
	return (&envcar.Carrier{}).Get(key)
}

// lookupTraceCtx returns the value of the variable carrying the tracectx
// key: its EnvName, else the first name in byte order that EnvKey decodes
// to the same key (X_TRACECTX_A_B for a_b).
func lookupTraceCtx(key string) string {
	name, err := EnvName(key)
	if err != nil {
		return ""
	}
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	k, _ := NormalizeKey(key)
	var found, value string
	for _, kv := range os.Environ() {
		n, v, _ := strings.Cut(kv, "=")
		if ek, ok := EnvKey(n); ok && ek == k && (found == "" || n < found) {
			found, value = n, v
		}
	}
	return value
}

// Set passes key, spelt for the environment, and value to SetEnv. A
// tracectx header with an invalid key is not set.
func (c EnvCarrier) Set(key, value string) {
	if c.SetEnv == nil {
		return
	}
	if k, ok := tracectxHeader(key); ok {
		if name, err := EnvName(k); err == nil {
			c.SetEnv(name, value)
		}
		return
	}
	(&envcar.Carrier{SetEnvFunc: c.SetEnv}).Set(key, value)
}

// Keys lists the carrier keys present in the environment: each tracectx
// variable as its header name ("x-tracectx-transactionid"), and every
// other variable whose name is already in the specification's spelling
// as it is.
func (c EnvCarrier) Keys() []string {
	keys := (&envcar.Carrier{}).Keys()
	for i, name := range keys {
		if k, ok := EnvKey(name); ok {
			keys[i] = HeaderPrefix + k
		}
	}
	return keys
}

// tracectxHeader returns the key of a tracectx header name.
func tracectxHeader(key string) (string, bool) { return cutPrefixFold(key, HeaderPrefix) }

// cutPrefixFold is strings.CutPrefix ignoring case; a name that is all
// prefix has none.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) <= len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}
