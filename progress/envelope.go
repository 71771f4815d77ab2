package progress

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/progress/internal/encode"
	"github.com/progressotel/progressotel/propagation"
	"github.com/progressotel/progressotel/tncomessage"
)

// maxScopeKeys bounds the tenant scope map written per record: tenant,
// organization and project are always kept, then other keys in sorted
// order. Real scopes have one to three keys.
const maxScopeKeys = 8

// envelope appends the envelope attributes that are set. Each string is
// cut at MaxStringLen like a detail string.
func (r *Recorder) envelope(ctx context.Context, e *encode.Encoder, env *Envelope) {
	r.envString(e, tncomessage.AttrComponentName, env.Component.Name)
	r.envString(e, tncomessage.AttrComponentVersion, env.Component.Version)
	r.envString(e, tncomessage.AttrResourceType, env.Resource.Type)
	r.envString(e, tncomessage.AttrResourceID, env.Resource.ID)
	r.envString(e, tncomessage.AttrResourceNamespace, env.Resource.Namespace)
	r.envString(e, tncomessage.AttrResourceUID, env.Resource.UID)
	if len(env.Scope) > maxScopeKeys {
		r.wideScope(e, env.Scope)
	} else {
		for k, v := range env.Scope {
			r.scope(e, k, v)
		}
	}
	if env.ObservedGeneration != 0 {
		e.Attrs = append(e.Attrs, attribute.Int64(tncomessage.AttrObservedGeneration, env.ObservedGeneration))
	}
	tenant := env.Tenant()
	if tenant == "" {
		tenant, _ = propagation.FromContext(ctx).Get("tenantid")
	}
	r.envString(e, tncomessage.AttrTenant, tenant)
}

// envString appends key=v when v is set (see encode.Encoder.Envelope).
func (r *Recorder) envString(e *encode.Encoder, key, v string) {
	if v != "" {
		e.Envelope(key, v)
	}
}

// wideScope writes a scope of more than maxScopeKeys keys: the routing
// keys first, then the others in sorted order, the rest cut.
func (r *Recorder) wideScope(e *encode.Encoder, scope map[string]string) {
	keys := make([]string, 0, len(scope))
	for k, v := range scope {
		if v != "" {
			keys = append(keys, k)
		}
	}
	rank := func(k string) int {
		if i := slices.Index(routingScopeKeys, k); i >= 0 {
			return i
		}
		return len(routingScopeKeys)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(rank(a)-rank(b), strings.Compare(a, b)) })
	if len(keys) > maxScopeKeys {
		e.Cut()
		keys = keys[:maxScopeKeys]
	}
	for _, k := range keys {
		r.scope(e, k, scope[k])
	}
}

// scope appends one scope key; present-only, so "" is skipped. A key
// longer than MaxStringLen is cut off whole, as a detail key would be.
func (r *Recorder) scope(e *encode.Encoder, k, v string) {
	if len(k) > r.lim.MaxStringLen {
		e.Cut()
		return
	}
	r.envString(e, scopeKey(k), v)
}

// routingScopeKeys are the scope keys a wide scope keeps first, in order.
var routingScopeKeys = []string{"tenant", "organization", "project"}

func scopeKey(k string) string {
	switch k {
	case "organization":
		return tncomessage.ScopePrefix + "organization"
	case "project":
		return tncomessage.ScopePrefix + "project"
	case "tenant":
		return tncomessage.ScopePrefix + "tenant"
	}
	return tncomessage.ScopePrefix + tncomessage.EscapeSegment(k)
}
