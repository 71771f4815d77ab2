package terraform

import (
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/internal/kit/adapter"
)

// startTask starts the span of a resource operation (action "refresh" for
// a refresh), a task of the run, and keeps it open in open. Under the CI/CD
// conventions its name drops the address's instance keys ("create
// null_resource.a"), so that it stays low-cardinality; the task's keeps them.
func (d *decoder) startTask(open map[string]*span, addr, action string, rf resourceFields, t time.Time) *span {
	ctx, s := d.op.StartTask(d.cmdCtx, t, adapter.Task{
		Name: action + " " + addr, ID: addr,
		Span: action + " " + withoutKeys(addr), OldSpan: action + " " + addr,
	},
		attribute.String("terraform.resource.address", addr),
		attribute.String("terraform.resource.type", rf.ResourceType),
		attribute.String("terraform.action", action))
	return d.opened(&span{addr: addr, action: action, rf: rf, ctx: ctx, span: s, task: true}, open, addr)
}

// withoutKeys drops the instance keys of a resource address:
// module.m["a"].null_resource.b[0] is module.m.null_resource.b. A quoted
// key may hold brackets.
func withoutKeys(addr string) string {
	if !strings.ContainsRune(addr, '[') {
		return addr
	}
	var b strings.Builder
	depth, quoted := 0, false
	for i := 0; i < len(addr); i++ {
		switch c := addr[i]; {
		case quoted && c == '\\':
			i++
		case quoted:
			quoted = c != '"'
		case c == '"' && depth > 0:
			quoted = true
		case c == '[':
			depth++
		case c == ']' && depth > 0:
			depth--
		case depth == 0:
			b.WriteByte(c)
		}
	}
	return b.String()
}
