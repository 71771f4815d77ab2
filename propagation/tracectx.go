package propagation

import (
	"context"
	"errors"
	"slices"
	"strings"

	otelprop "go.opentelemetry.io/otel/propagation"
)

// TraceCtxPropagator is the OpenTelemetry TextMapPropagator for Ignition's
// x-tracectx-* headers. The zero value is ready to use.
//
// Extract copies every carrier key that starts with "x-tracectx-", in any
// case, into the context's Values under the rest of the name lower-cased
// ("X-Tracectx-TransactionId: tx-1" becomes transactionid = tx-1). Extracted
// values are merged over the values ctx already has. A key or value that
// breaks the rules of NormalizeKey or NormalizeValue is skipped, and at most
// MaxValues values are kept (see MaxValues for which); Extract never fails.
// With no tracectx key in the carrier it returns ctx itself.
//
// Inject writes every value of the context as "x-tracectx-<key>", with
// Ignition's spelling for the well-known keys ("x-tracectx-TransactionId").
type TraceCtxPropagator struct{}

var _ otelprop.TextMapPropagator = TraceCtxPropagator{}

// TraceCtx returns the x-tracectx-* propagator.
func TraceCtx() otelprop.TextMapPropagator { return TraceCtxPropagator{} }

// Default returns the project's propagator: W3C trace context (traceparent,
// tracestate), W3C baggage and tracectx, in that order. otelbridge.Setup
// installs it with otel.SetTextMapPropagator.
func Default() otelprop.TextMapPropagator {
	return otelprop.NewCompositeTextMapPropagator(
		otelprop.TraceContext{}, otelprop.Baggage{}, TraceCtxPropagator{})
}

// Inject sets the tracectx values of ctx into carrier.
func (TraceCtxPropagator) Inject(ctx context.Context, carrier otelprop.TextMapCarrier) {
	FromContext(ctx).All(func(k, v string) bool {
		carrier.Set(HeaderPrefix+spelling(k), v)
		return true
	})
}

// Extract returns a copy of ctx carrying the tracectx values of carrier
// merged over those ctx already has.
func (TraceCtxPropagator) Extract(ctx context.Context, carrier otelprop.TextMapCarrier) context.Context {
	v, n, _ := extract(FromContext(ctx), carrier)
	if n == 0 {
		return ctx
	}
	return ContextWithValues(ctx, v)
}

// ExtractValues returns the tracectx values of carrier, as Extract would
// add them to an empty context, and an error joining one error per entry it
// skipped (wrapping ErrInvalidKey, ErrInvalidValue or ErrTooManyValues).
// Use it to reject a request with bad tracectx headers instead of
// silently dropping them.
func ExtractValues(carrier otelprop.TextMapCarrier) (Values, error) {
	v, _, errs := extract(Values{}, carrier)
	return v, errors.Join(errs...)
}

// Fields returns the well-known header names, lower-cased. The set is open:
// Inject writes whatever keys the context holds.
func (TraceCtxPropagator) Fields() []string {
	out := make([]string, len(wellKnown))
	for i, w := range wellKnown {
		out[i] = HeaderPrefix + w.key
	}
	return out
}

// extract merges the valid tracectx entries of carrier over base. n is the
// number of valid entries found; errs reports each skipped entry.
func extract(base Values, carrier otelprop.TextMapCarrier) (v Values, n int, errs []error) {
	type cand struct {
		raw string
		kv
	}
	var cands []cand
	for _, raw := range carrier.Keys() {
		if name, ok := tracectxHeader(raw); ok {
			if e, ok := normalize(name, carrier.Get(raw), &errs); ok {
				cands = append(cands, cand{raw, e})
			}
		}
	}
	if len(cands) == 0 {
		return base, 0, errs
	}
	// Keys() order is random for map-based carriers: sort by the raw name
	// so that which spelling of a duplicated key wins is deterministic.
	slices.SortFunc(cands, func(a, b cand) int { return strings.Compare(a.raw, b.raw) })
	kvs := make([]kv, len(cands))
	for i, c := range cands {
		kvs[i] = c.kv
	}
	v, err := base.merge(kvs)
	if err != nil {
		errs = append(errs, err)
	}
	return v, len(cands), errs
}
