package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/log"

	"github.com/progressotel/progressotel/propagation"
)

// DefaultShutdownTimeout bounds the flush of telemetry at the end of a
// command: what a collector outage can add to a run's or an emit's time.
const DefaultShutdownTimeout = 5 * time.Second

// Environment variables of progressotel's own.
const (
	envOutput          = "PROGRESSOTEL_OUTPUT"
	envShutdownTimeout = "PROGRESSOTEL_SHUTDOWN_TIMEOUT"
)

// commonOptions are the flags of run, emit and transition.
type commonOptions struct {
	envelope        envelopeFlags
	tracectx        pairs
	output          string
	shutdownTimeout time.Duration
}

func (o *commonOptions) register(fs *flag.FlagSet) {
	o.envelope.register(fs)
	fs.Var(&o.tracectx, "tracectx", "add the tracectx `key=value` of the request (repeatable): key without the x-tracectx- prefix, such as transactionid")
	fs.StringVar(&o.output, "output", os.Getenv(envOutput), "write the live, pretty, json and console exporters' output to `path` (appended) instead of stderr ("+envOutput+")")
	timeout := DefaultShutdownTimeout
	if d, err := time.ParseDuration(os.Getenv(envShutdownTimeout)); err == nil && d > 0 {
		timeout = d
	}
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", timeout, "the longest wait for telemetry to be flushed at the end, however the collector behaves ("+envShutdownTimeout+")")
}

func (o *commonOptions) check() error {
	if o.shutdownTimeout <= 0 {
		return invalidf("--shutdown-timeout must be positive")
	}
	for _, p := range o.tracectx {
		_, err := propagation.NormalizeKey(p.key)
		if err == nil {
			_, err = propagation.NormalizeValue(p.value)
		}
		if err != nil {
			return fmt.Errorf("%w: --tracectx %s: %w", errInvalid, p.key, err)
		}
	}
	return o.envelope.check()
}

// envelopeFlags are the envelope of the events: who emits them, about
// which resource, for which tenant.
type envelopeFlags struct {
	env                           envelope // but its Scope, which envelope builds
	tenant, organization, project string
	scope                         pairs
}

func (e *envelopeFlags) register(fs *flag.FlagSet) {
	c, r := &e.env.Component, &e.env.Resource
	fs.StringVar(&c.Name, "component", "", "the emitting driver or component's `name` (progress.component.name)")
	fs.StringVar(&c.Version, "component-version", "", "its `version`")
	fs.StringVar(&r.Type, "resource-type", "", "the managed resource's `type` (progress.resource.type)")
	fs.StringVar(&r.ID, "resource-id", "", "the managed resource's `id` or name")
	fs.StringVar(&r.Namespace, "resource-namespace", "", "the managed resource's `namespace`")
	fs.StringVar(&r.UID, "resource-uid", "", "the managed resource's `uid`")
	fs.StringVar(&e.tenant, "tenant", "", "the `tenant`: scope key tenant, the collector's routing key (progress.tenant)")
	fs.StringVar(&e.organization, "organization", "", "scope key `organization` (the tenant when --tenant is not given)")
	fs.StringVar(&e.project, "project", "", "scope key `project`")
	fs.Var(&e.scope, "scope", "add a tenant scope `key=value` (repeatable)")
	fs.Int64Var(&e.env.ObservedGeneration, "observed-generation", 0, "`n`, the resource's metadata.generation")
}

func (e *envelopeFlags) check() error {
	if e.env.ObservedGeneration < 0 {
		return invalidf("--observed-generation must not be negative")
	}
	for _, p := range e.scope {
		if p.key == "" {
			return invalidf("--scope %q: empty key", p.key+"="+p.value)
		}
	}
	return nil
}

func (e *envelopeFlags) envelope() envelope {
	out := e.env
	scope := map[string]string{}
	for _, p := range e.scope {
		scope[p.key] = p.value
	}
	for k, v := range map[string]string{"tenant": e.tenant, "organization": e.organization, "project": e.project} {
		if v != "" {
			scope[k] = v
		}
	}
	if len(scope) > 0 {
		out.Scope = scope
	}
	return out
}

// pair is a key=value flag value.
type pair struct{ key, value string }

// pairs is a repeatable key=value flag.
type pairs []pair

func (p *pairs) String() string {
	if p == nil {
		return ""
	}
	s := make([]string, len(*p))
	for i, kv := range *p {
		s[i] = kv.key + "=" + kv.value
	}
	return strings.Join(s, ",")
}

func (p *pairs) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("%q is not key=value", s)
	}
	*p = append(*p, pair{strings.TrimSpace(k), v})
	return nil
}

// buildDetails builds the details of emit from --details (a JSON object,
// @file or - for stdin) and the --detail pairs, which win.
func buildDetails(raw string, extra pairs, stdin io.Reader) (json.RawMessage, error) {
	text := []byte(raw)
	if raw == "-" || strings.HasPrefix(raw, "@") {
		src := stdin
		if raw != "-" {
			f, err := os.Open(raw[1:])
			if err != nil {
				return nil, invalidf("--details %s: %v", raw, err)
			}
			defer f.Close()
			src = f
		}
		b, err := io.ReadAll(io.LimitReader(src, maxDetailsInput+1))
		if err != nil {
			return nil, invalidf("--details %s: %v", raw, err)
		}
		text = b
	}
	if len(text) > maxDetailsInput {
		return nil, invalidf("details longer than %d bytes", maxDetailsInput)
	}
	obj, err := decodeDetails(text)
	if err != nil {
		return nil, err
	}
	if len(extra) == 0 {
		return json.RawMessage(text), nil
	}
	merged := map[string]json.RawMessage{}
	if len(obj) > 0 {
		if err := json.Unmarshal(text, &merged); err != nil {
			return nil, invalidf("details: %v", err)
		}
	}
	for _, p := range extra {
		if k, ok := strings.CutSuffix(p.key, ":"); ok { // key:=json
			var v any
			if err := json.Unmarshal([]byte(p.value), &v); err != nil {
				return nil, invalidf("--detail %s:=%s: not a JSON value: %v", k, p.value, err)
			}
			merged[k] = json.RawMessage(p.value)
			continue
		}
		b, _ := json.Marshal(p.value)
		merged[p.key] = b
	}
	return json.Marshal(merged)
}

// maxDetailsInput bounds the details read from a file or stdin, as the
// hand-off bounds a request.
const maxDetailsInput = 512 << 10

// parseSeverity reads --severity: a level name (the first number of its
// range of four) or a severity number.
func parseSeverity(s string) (log.Severity, error) {
	switch name := strings.ToLower(strings.TrimSpace(s)); name {
	case "":
		return log.SeverityInfo, nil
	case "warning":
		return log.SeverityWarn, nil
	default:
		if i := slices.Index(severityNames, name); i >= 0 {
			return log.SeverityTrace + log.Severity(4*i), nil
		}
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= int(log.SeverityFatal4) {
		return log.Severity(n), nil
	}
	return 0, invalidf("--severity %q: want trace, debug, info, warn, error, fatal or a number from 1 to 24", s)
}

// severityNames are the level names, in order: the values --severity
// completes to.
var severityNames = []string{"trace", "debug", "info", "warn", "error", "fatal"}

// parseTime reads --time: RFC 3339, empty for now.
func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Now(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, invalidf("--time %q: not an RFC 3339 time", s)
	}
	return t, nil
}
