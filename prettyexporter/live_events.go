package prettyexporter

import (
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/progressotel/progressotel/internal/base/wireformat"
)

// The event types the live view knows, with the detail keys it reads.
// They are the wire names of packages progress (the common catalogue),
// ansible and terraform, which this package does not import: the live
// view's tests check each against its package's constant.
const (
	typeOperationStarted   = "common/OperationStarted"   // operation
	typeProgress           = "common/Progress"           // completed, total, unit
	typeOperationCompleted = "common/OperationCompleted" // operation, durationMs
	typeOperationFailed    = "common/OperationFailed"    // operation, failureCode, description
	typeEventsDropped      = "common/EventsDropped"      // count, reason

	typePlayStarted         = "ansible/PlayStarted"               // playName
	typePlayNoHosts         = "ansible/PlayMatchedNoNoHostsEvent" // playName
	typeTaskStarted         = "ansible/TaskStarted"               // taskName
	typeTaskStartedOnHost   = "ansible/TaskStartedOnHost"         // taskName, hostName
	typeTaskCompletedOnHost = "ansible/TaskCompletedOnHost"       // taskName, hostName, itemLabel, taskResult.{changed,msg}
	typeTaskRetryOnHost     = "ansible/TaskRetryOnHost"           // taskName, hostName, taskResult.msg
	typeTaskFailedOnHost    = "ansible/TaskFailedOnHost"          // ... and ignored
	typeTaskSkippedOnHost   = "ansible/TaskSkippedOnHost"
	typeHostUnreachable     = "ansible/HostUnreachable"
	typeVarPrompt           = "ansible/VarPrompt"      // varName
	typePlaybookResult      = "ansible/PlaybookResult" // hostStats.<host>.<count>

	typeTFPlannedChange      = "terraform/PlannedChange"      // address, action
	typeTFApplyStarted       = "terraform/ApplyStarted"       // address, action
	typeTFApplyProgress      = "terraform/ApplyProgress"      // address
	typeTFApplyCompleted     = "terraform/ApplyCompleted"     // address
	typeTFApplyErrored       = "terraform/ApplyErrored"       // address
	typeTFProvisionStarted   = "terraform/ProvisionStarted"   // address, provisioner
	typeTFProvisionOutput    = "terraform/ProvisionOutput"    // address, output
	typeTFProvisionCompleted = "terraform/ProvisionCompleted" // address
	typeTFProvisionErrored   = "terraform/ProvisionErrored"   // address, provisioner
	typeTFRefreshStarted     = "terraform/RefreshStarted"     // address
	typeTFRefreshCompleted   = "terraform/RefreshCompleted"   // address
	typeTFDiagnostic         = "terraform/Diagnostic"         // severity, summary, detail, address
)

// apply updates the model with one record that arrived at wall time
// wall. Its cost does not grow with the model: a few map lookups and a
// pass over the record's attributes.
func (m *liveModel) apply(r *sdklog.Record, wall time.Time) {
	v := wireformat.GetView()
	defer wireformat.PutView(v)
	v.Load(r)
	ts := r.Timestamp()
	if ts.IsZero() {
		ts = r.ObservedTimestamp()
	}
	if ts.IsZero() {
		ts = wall
	}
	if v.Kind == wireformat.KindLog || v.Name == typeEventsDropped {
		m.p.record(r, v, false) // not part of an operation's tree
		return
	}
	key := keyOf(r, v)
	if _, ok := m.endedSet[key]; ok {
		m.p.record(r, v, false) // a late record of an operation already printed
		return
	}
	t := m.tree(key, wall)
	m.tick++
	t.touched = m.tick
	m.gen++
	if t.seen.IsZero() || !ts.Before(t.seen) {
		t.seen, t.seenWall = ts, wall
	}
	if t.start.IsZero() {
		t.start = ts
	}
	if t.resource == "" && (v.ResourceType != "" || v.ResourceID != "") {
		t.resource = safeText(resourceText(v), maxLabelBytes)
	}
	if t.title == "" {
		group, _, _ := strings.Cut(v.Name, "/")
		t.title = safeText(group, maxLabelBytes)
	}
	if t.tx == "" && v.HasTx && v.TxID != "" {
		t.tx = safeText(v.TxID, maxLabelBytes)
	}
	ended := false
	if v.Kind == wireformat.KindTransition {
		m.transition(t, v, ts)
	} else {
		ended = m.event(t, r, v, ts)
	}
	if m.plain {
		m.printPlain(t, r, v, wall)
	}
	if ended {
		t.end = ts
		m.endTree(t, wall)
	}
}

// keyOf is the operation a record belongs to: its trace, else its
// resource, else its transaction.
func keyOf(r *sdklog.Record, v *wireformat.View) liveKey {
	if tid := r.TraceID(); tid.IsValid() {
		return liveKey{trace: tid}
	}
	if v.HasResource() {
		return liveKey{other: "r\x00" + v.ResourceType + "\x00" + v.ResourceNamespace + "\x00" + v.ResourceID}
	}
	if v.HasTx {
		return liveKey{other: "x\x00" + v.TxID}
	}
	return liveKey{other: "-"}
}

func resourceText(v *wireformat.View) string {
	switch {
	case v.ResourceType == "":
		return v.ResourceID
	case v.ResourceID == "":
		return v.ResourceType
	}
	return v.ResourceType + "/" + v.ResourceID
}

// event applies a progress event; it reports whether the operation ended.
func (m *liveModel) event(t *liveTree, r *sdklog.Record, v *wireformat.View, ts time.Time) (ended bool) {
	switch v.Name {
	case typeOperationStarted:
		if op, ok := detailString(v, "operation"); ok && op != "" {
			t.op = safeText(op, maxLabelBytes)
		}
		t.start = ts
	case typeOperationCompleted:
		t.status = stOK
		return true
	case typeOperationFailed:
		t.status = stFailed
		code, _ := detailString(v, "failureCode")
		desc, _ := detailString(v, "description")
		switch {
		case code != "" && desc != "":
			t.msg = safeText(code+": "+desc, maxMsgBytes)
		default:
			t.msg = safeText(code+desc, maxMsgBytes)
		}
		return true
	case typeProgress:
		done, _ := detailInt(v, "completed")
		total, _ := detailInt(v, "total")
		unit, _ := detailString(v, "unit")
		t.bar.done, t.bar.total, t.bar.ok = done, total, true
		if t.bar.unit == "" || unit != "" && !strings.EqualFold(unit, t.bar.unit) {
			t.bar.unit = safeText(unit, 40)
		}

	case typePlayStarted:
		name, _ := detailString(v, "playName")
		m.startPlay(t, name, ts)
	case typePlayNoHosts:
		name, _ := detailString(v, "playName")
		p := t.play
		if p == nil {
			p = m.startPlay(t, name, ts)
		}
		if p != nil {
			p.msg = "no hosts matched"
			if p.first == nil {
				p.superseded = true
				t.play = nil
				m.finish(p, stSkipped, ts)
				m.collapse(p)
			} else {
				m.supersedePlay(p, ts)
			}
		}
	case typeTaskStarted:
		name, _ := detailString(v, "taskName")
		m.startTask(t, name, ts)
	case typeTaskStartedOnHost:
		if task := m.taskFor(t, v, ts); task != nil {
			m.hostNode(t, task, v, ts)
		}
	case typeTaskCompletedOnHost:
		st := stOK
		if detailBool(v, "taskResult.changed") {
			st = stChanged
		}
		m.hostResult(t, v, ts, st)
	case typeTaskFailedOnHost:
		st := stFailed
		if detailBool(v, "ignored") {
			st = stIgnored
		}
		m.hostResult(t, v, ts, st)
	case typeTaskSkippedOnHost:
		m.hostResult(t, v, ts, stSkipped)
	case typeHostUnreachable:
		m.hostResult(t, v, ts, stUnreachable)
	case typeTaskRetryOnHost:
		if task := m.taskFor(t, v, ts); task != nil {
			if h := m.hostNode(t, task, v, ts); h != nil {
				h.attempts = max(h.attempts, 1) + 1
				msg, _ := detailString(v, "taskResult.msg")
				h.msg = safeText(msg, maxMsgBytes)
			}
		}
	case typeVarPrompt:
		name, _ := detailString(v, "varName")
		t.msg = safeText("vars_prompt "+name+": the playbook waits for input", maxMsgBytes)
	case typePlaybookResult:
		m.supersedePlay(t.play, ts)
		t.recap = recap(v)

	case typeTFPlannedChange:
		if n, created := m.resourceNode(t, v, "", ts); created {
			n.status = stPending
		}
	case typeTFApplyStarted:
		if n, _ := m.resourceNode(t, v, "", ts); n != nil {
			n.status, n.start, n.msg = stRunning, ts, ""
			n.label = resourceLabel(v, "")
		}
	case typeTFApplyProgress:
		if n, _ := m.resourceNode(t, v, "", ts); n != nil && n.status == stPending {
			n.status, n.start = stRunning, ts
		}
	case typeTFApplyCompleted, typeTFRefreshCompleted:
		prefix := ""
		if v.Name == typeTFRefreshCompleted {
			prefix = "refresh"
		}
		if n, _ := m.resourceNode(t, v, prefix, ts); n != nil {
			m.finish(n, stOK, ts)
			m.collapse(n)
		}
	case typeTFApplyErrored:
		if n, _ := m.resourceNode(t, v, "", ts); n != nil {
			m.finish(n, stFailed, ts)
		}
	case typeTFRefreshStarted:
		if n, _ := m.resourceNode(t, v, "refresh", ts); n != nil {
			n.status, n.start = stRunning, ts
		}
	case typeTFProvisionStarted, typeTFProvisionOutput, typeTFProvisionErrored:
		if n, _ := m.resourceNode(t, v, "", ts); n != nil {
			prov, _ := detailString(v, "provisioner")
			switch v.Name {
			case typeTFProvisionStarted:
				n.msg = safeText(prov, maxMsgBytes)
			case typeTFProvisionOutput:
				out, _ := detailString(v, "output")
				n.msg = safeText(out, maxMsgBytes)
			default:
				n.msg = safeText("provisioner "+prov, maxMsgBytes)
			}
		}
	case typeTFProvisionCompleted:
	case typeTFDiagnostic:
		addr, _ := detailString(v, "address")
		n := t.root.byName[clipKey(addr)]
		if addr == "" || n == nil {
			m.p.record(r, v, false)
			break
		}
		summary, _ := detailString(v, "summary")
		if detail, _ := detailString(v, "detail"); detail != "" {
			summary += ": " + detail
		}
		n.msg = safeText(summary, maxMsgBytes)

	default:
		if strings.HasPrefix(v.Name, "ansible/") || strings.HasPrefix(v.Name, "terraform/") {
			// The run's other messages (version, plan summary, outputs,
			// logs) say nothing the tree does not show; warnings and
			// errors are printed above it.
			if r.Severity() >= log.SeverityWarn {
				m.p.record(r, v, false)
			}
			break
		}
		m.lastEvent(t, r, v, ts)
	}
	return false
}

// lastEvent shows the latest event of a driver the view has no mapping
// for as one row of its tree; warnings and errors are also printed above.
func (m *liveModel) lastEvent(t *liveTree, r *sdklog.Record, v *wireformat.View, ts time.Time) {
	if t.last == nil {
		t.last = m.newNode(t, &t.root, kindEvent, "", "", ts)
		if t.last == nil {
			return
		}
	}
	n := t.last
	n.label = safeText(v.Name, maxLabelBytes)
	n.start = ts
	switch sev := r.Severity(); {
	case sev >= log.SeverityError:
		n.status = stFailed
	case sev >= log.SeverityWarn:
		n.status = stIgnored
	default:
		n.status = stRunning
	}
	var b []byte
	for i, d := range v.Details {
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendText(b, d.Path, false)
		b = append(b, '=')
		b = appendPrettyValue(b, d.Value, false)
		if len(b) > maxMsgBytes {
			break
		}
	}
	n.msg = safeText(string(b), maxMsgBytes)
	if r.Severity() >= log.SeverityWarn {
		m.p.record(r, v, false)
	}
}

// transition shows a condition stream with its last transition.
func (m *liveModel) transition(t *liveTree, v *wireformat.View, ts time.Time) {
	key := clipKey(v.Name)
	n := t.root.byName[key]
	if n == nil {
		n = m.newNode(t, &t.root, kindStream, key, safeText(v.Name, maxLabelBytes), ts)
		if n == nil {
			return
		}
	}
	n.start = ts
	var b []byte
	if v.HasPrevious {
		b = appendCondition(b, v.Previous.Status, v.Previous.Reason)
		b = append(b, " → "...)
	}
	b = appendCondition(b, v.Transition.Status, v.Transition.Reason)
	if v.Transition.Message != "" {
		b = append(b, ' ')
		b = strconv.AppendQuote(b, v.Transition.Message)
	}
	n.msg = safeText(string(b), maxMsgBytes)
	reason := strings.ToLower(v.Transition.Reason)
	switch {
	case strings.EqualFold(v.Transition.Status, "True"):
		n.status = stOK
	case strings.Contains(reason, "error") || strings.Contains(reason, "fail"):
		n.status = stFailed
	case strings.EqualFold(v.Transition.Status, "False"):
		n.status = stRunning
	default:
		n.status = stPending
	}
}

// startPlay ends the current play and starts the next.
func (m *liveModel) startPlay(t *liveTree, name string, ts time.Time) *liveNode {
	m.supersedePlay(t.play, ts)
	t.play = m.newNode(t, &t.root, kindPlay, "", safeText("play "+name, maxLabelBytes), ts)
	return t.play
}

// startTask supersedes the current task and starts the next in the
// current play.
func (m *liveModel) startTask(t *liveTree, name string, ts time.Time) *liveNode {
	m.supersedeTask(t.task, ts)
	parent := &t.root
	if t.play != nil {
		parent = t.play
	}
	t.task = m.newNode(t, parent, kindTask, clipKey(name), safeText(name, maxLabelBytes), ts)
	return t.task
}

// taskFor finds the task a host event names: the current one, else the
// latest of that name in the current play (a host of the free strategy
// may still be on an earlier task), else a new one (a stream read from
// the middle).
func (m *liveModel) taskFor(t *liveTree, v *wireformat.View, ts time.Time) *liveNode {
	name, _ := detailString(v, "taskName")
	key := clipKey(name)
	if t.task != nil && (t.task.nameKey == key || isHandler(t.task.nameKey, key)) {
		return t.task
	}
	parent := &t.root
	if t.play != nil {
		parent = t.play
	}
	if n := parent.byName[key]; n != nil {
		return n
	}
	if n := parent.byName[handlerPrefix+key]; n != nil {
		return n
	}
	n := m.newNode(t, parent, kindTask, key, safeText(name, maxLabelBytes), ts)
	if n != nil {
		n.superseded = true // not the current task: finish with its hosts
	}
	return n
}

// handlerPrefix starts the name of a handler's TaskStarted; its hosts'
// events name the handler without it.
const handlerPrefix = "Handler/"

func isHandler(taskKey, hostTaskName string) bool {
	return len(taskKey) == len(handlerPrefix)+len(hostTaskName) &&
		strings.HasPrefix(taskKey, handlerPrefix) && taskKey[len(handlerPrefix):] == hostTaskName
}

// hostNode finds or starts the row of a host under task.
func (m *liveModel) hostNode(t *liveTree, task *liveNode, v *wireformat.View, ts time.Time) *liveNode {
	name, _ := detailString(v, "hostName")
	key := clipKey(name)
	if h := task.byName[key]; h != nil {
		return h
	}
	if task.status.finished() {
		return nil
	}
	return m.newNode(t, task, kindHost, key, safeText(name, maxLabelBytes), ts)
}

// hostResult applies a host's result: a loop item counts, the final
// result finishes the host.
func (m *liveModel) hostResult(t *liveTree, v *wireformat.View, ts time.Time, st liveStatus) {
	task := m.taskFor(t, v, ts)
	if task == nil {
		return
	}
	h := m.hostNode(t, task, v, ts)
	msg, _ := detailString(v, "taskResult.msg")
	if item, _ := detailString(v, "itemLabel"); item != "" {
		if h != nil {
			h.items++
			if st >= stIgnored {
				h.msg = safeText(item+": "+msg, maxMsgBytes)
			}
		}
		return
	}
	if h == nil {
		// Over the node cap: the task still counts the host.
		if !task.status.finished() {
			task.counts[st]++
		}
		return
	}
	switch {
	case st >= stIgnored:
		h.msg = safeText(msg, maxMsgBytes)
	default:
		h.msg = "" // a retry's message, now past
	}
	m.finish(h, st, ts)
}

// resourceNode finds or creates the row of a Terraform resource
// operation; prefix separates refreshes from changes of one address.
func (m *liveModel) resourceNode(t *liveTree, v *wireformat.View, prefix string, ts time.Time) (n *liveNode, created bool) {
	addr, _ := detailString(v, "address")
	key := clipKey(addr)
	if prefix != "" {
		key = prefix + "\x00" + key
	}
	if n := t.root.byName[key]; n != nil {
		return n, false
	}
	n = m.newNode(t, &t.root, kindResource, key, resourceLabel(v, prefix), ts)
	return n, n != nil
}

func resourceLabel(v *wireformat.View, action string) string {
	addr, _ := detailString(v, "address")
	if action == "" {
		action, _ = detailString(v, "action")
	}
	if action == "" {
		return safeText(addr, maxLabelBytes)
	}
	return safeText(action+" "+addr, maxLabelBytes)
}

// recap is Ansible's recap in one line: each host's non-zero counts.
func recap(v *wireformat.View) string {
	const prefix = "hostStats."
	var b []byte
	host := ""
	for _, d := range v.Details {
		if !strings.HasPrefix(d.Path, prefix) {
			continue
		}
		rest := d.Path[len(prefix):]
		i := strings.LastIndexByte(rest, '.')
		if i < 0 {
			continue
		}
		h, stat := rest[:i], rest[i+1:]
		n, ok := intValue(d.Value)
		if !ok || n == 0 && stat != "ok" {
			continue
		}
		if h != host {
			if host != "" {
				b = append(b, " · "...)
			}
			host = h
			b = append(b, wireformat.UnescapeSegment(h)...)
			b = append(b, ':')
		}
		b = append(b, ' ')
		b = append(b, stat...)
		b = append(b, '=')
		b = strconv.AppendInt(b, n, 10)
		if len(b) > maxMsgBytes {
			break
		}
	}
	return safeText(string(b), maxMsgBytes)
}

// clipKey is the map key of a name: the name clipped, so that a huge name
// costs no more than a short one. Lookups do not allocate; the key stored
// by newNode is a copy.
func clipKey(s string) string {
	if len(s) > maxLabelBytes {
		return s[:maxLabelBytes]
	}
	return s
}

func detail(v *wireformat.View, path string) (attribute.Value, bool) {
	for i := range v.Details {
		if v.Details[i].Path == path {
			return v.Details[i].Value, true
		}
	}
	return attribute.Value{}, false
}

// detailString returns a detail as text; null (an empty value) is absent.
func detailString(v *wireformat.View, path string) (string, bool) {
	val, ok := detail(v, path)
	if !ok {
		return "", false
	}
	switch val.Type() {
	case attribute.STRING:
		return val.AsString(), true
	case attribute.EMPTY:
		return "", false
	}
	return val.String(), true
}

func detailInt(v *wireformat.View, path string) (int64, bool) {
	val, ok := detail(v, path)
	if !ok {
		return 0, false
	}
	return intValue(val)
}

func intValue(val attribute.Value) (int64, bool) {
	switch val.Type() {
	case attribute.INT64:
		return val.AsInt64(), true
	case attribute.FLOAT64:
		return int64(val.AsFloat64()), true
	case attribute.STRING:
		n, err := strconv.ParseInt(val.AsString(), 10, 64)
		return n, err == nil
	}
	return 0, false
}

func detailBool(v *wireformat.View, path string) bool {
	val, ok := detail(v, path)
	return ok && val.Type() == attribute.BOOL && val.AsBool()
}
