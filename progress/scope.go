package progress

import (
	"cmp"
	"context"
	"maps"
)

// envelopeKey is the context key of the scope's envelope.
type envelopeKey struct{}

// ContextWithEnvelope returns a copy of ctx whose envelope is env: every
// event and transition recorded with the returned context, by Record,
// RecordTransition, RecordIfChanged or a Tracker, through any Recorder,
// carries env without setting it on each one. Set it once for a scope of
// work (a lifecycle request, a reconcile), as the span is.
//
// An event's own envelope wins over the context's, field by field: a
// non-empty Component.Name, Component.Version, Resource.Type, Resource.ID,
// Resource.Namespace or Resource.UID, a non-zero ObservedGeneration, and a
// non-empty Scope, which replaces the context's Scope whole (a tenant
// scope is never mixed from two sources). A ContextWithEnvelope inside
// another merges the same way: the inner env wins field by field.
//
// env.Scope is copied, so the caller may reuse its map.
func ContextWithEnvelope(ctx context.Context, env Envelope) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	if outer, ok := ctx.Value(envelopeKey{}).(*Envelope); ok {
		env = outer.under(env)
	}
	env.Scope = maps.Clone(env.Scope)
	return context.WithValue(ctx, envelopeKey{}, &env)
}

// EnvelopeFromContext returns the envelope set by ContextWithEnvelope, or
// the zero Envelope. Its Scope must not be modified.
func EnvelopeFromContext(ctx context.Context) Envelope {
	if ctx != nil {
		if env, ok := ctx.Value(envelopeKey{}).(*Envelope); ok {
			return *env
		}
	}
	return Envelope{}
}

// withScope completes own by the envelope of ctx, field by field. Without
// one in ctx it leaves own unchanged and allocates nothing.
func withScope(ctx context.Context, own *Envelope) {
	if base, ok := ctx.Value(envelopeKey{}).(*Envelope); ok {
		*own = base.under(*own)
	}
}

// under returns own with each unset field taken from s.
func (s *Envelope) under(own Envelope) Envelope {
	own.Component.Name = cmp.Or(own.Component.Name, s.Component.Name)
	own.Component.Version = cmp.Or(own.Component.Version, s.Component.Version)
	own.Resource.Type = cmp.Or(own.Resource.Type, s.Resource.Type)
	own.Resource.ID = cmp.Or(own.Resource.ID, s.Resource.ID)
	own.Resource.Namespace = cmp.Or(own.Resource.Namespace, s.Resource.Namespace)
	own.Resource.UID = cmp.Or(own.Resource.UID, s.Resource.UID)
	if len(own.Scope) == 0 {
		own.Scope = s.Scope
	}
	if own.ObservedGeneration == 0 {
		own.ObservedGeneration = s.ObservedGeneration
	}
	return own
}
