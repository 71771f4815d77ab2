package ansible

import (
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/progressotel/progressotel/internal/base/outcome"
)

// A result above ansible-runner's size limit (a task printing megabytes)
// reaches the stream as {}: whether it changed anything is unknown until
// the recap, which counts it. Its TaskCompletedOnHost is recorded at once,
// saying so (resultUnknown), and its host span is held, as a pending
// failure's is (failures.go), until the recap settles it: changed while
// the recap counts more changes for the host than the events showed, else
// ok. Without a recap it ends ok, marked unknown.

// holdUnknown keeps host h's span, whose result runner stripped, open
// until the recap; end is Ansible's end time for it.
func (d *decoder) holdUnknown(h *hostState, end time.Time) {
	delete(d.hosts, hostKey{task: h.task, host: h.name})
	h.unknownEnd = end
	d.unknown = append(d.unknown, h)
}

// resolveUnknown ends h's held span, changed or ok, and the play it held
// if that has ended meanwhile.
func (d *decoder) resolveUnknown(h *hostState, changed bool) {
	d.unknown = slices.DeleteFunc(d.unknown, func(x *hostState) bool { return x == h })
	how := outcome.OK
	if changed {
		how = outcome.Changed
		d.countFor(h.name).Changed++
	}
	h.span.SetAttributes(attribute.Bool("ansible.result.unknown", true))
	d.endHost(h, h.unknownEnd, how)
	if p := h.task.play; p != d.play && !d.holds(p) {
		d.endTasks(p)
		d.endPlaySpan(p)
	}
}
