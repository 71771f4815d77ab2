package prettyexporter

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/progressotel/progressotel/tncomessage"
)

// The CI format: another renderer of the live view's model, for a CI log that folds by itself.
// It takes the model's notes as plain mode does (every record of an operation, liveModel.lines)
// and, in addition, every span's part as it finishes (liveModel.parts): a record is kept with its
// span until the part that groups it finishes, then printed as one fold. docs/formats.md shows
// both syntaxes.
//
//   - A group is a task or a resource operation: a finished part whose children (hosts,
//     provisioners) have none, or a part with no children right under its operation. A leaf
//     under a group hands its lines to the group. A part above groups (a play) is an outer part.
//   - GitHub Actions: groups cannot nest, so each group is one ::group:: named by its path
//     (play › task); a failed group's lines are printed outside any group, so they stay open,
//     and each failure gets an ::error annotation at its operation's end. With
//     GITHUB_STEP_SUMMARY set, each operation appends its outcome, counts and failures in
//     Markdown to that file as it ends.
//   - GitLab: sections nest as the tree. A group's section is printed when it ends, collapsed if
//     it succeeded and open if it failed (GitLab must be told at its start). The operation's and
//     the outer parts' sections open when their first group is printed, expanded: holding them
//     back would hold the whole run's log until its end.
//   - What waits is bounded per part: ciMaxLines lines or ciMaxBytes bytes, the newest kept and
//     the rest counted in the fold.

// CI flavours.
type ciFlavor uint8

const (
	ciNone ciFlavor = iota
	ciGitHub
	ciGitLab
)

// Bounds of the lines one part holds back.
const (
	ciMaxLines = 1000
	ciMaxBytes = 256 << 10
)

// detectCI decides the CI format: LiveCI asks for it (GitLab's syntax when GITLAB_CI=true, else
// GitHub's); LiveAuto chooses it when the writer is not a terminal and GITHUB_ACTIONS=true or
// GITLAB_CI=true.
func detectCI(mode LiveMode, isTerm bool, getenv func(string) string) ciFlavor {
	gitlab, github := getenv("GITLAB_CI") == "true", getenv("GITHUB_ACTIONS") == "true"
	switch {
	case mode == LiveCI && gitlab:
		return ciGitLab
	case mode == LiveCI:
		return ciGitHub
	case mode != LiveAuto || isTerm:
		return ciNone
	case github:
		return ciGitHub
	case gitlab:
		return ciGitLab
	}
	return ciNone
}

// ciBuf is what one part holds back: its lines, newest kept.
type ciBuf struct {
	tree    uint64
	lines   []ciLine
	start   int // lines[start:] are kept
	bytes   int
	dropped int
}

// ciLine is a line held back, with its place in the order the records came.
type ciLine struct {
	seq  uint64
	text []byte
}

func (b *ciBuf) add(line ciLine) {
	b.lines = append(b.lines, line)
	b.bytes += len(line.text) + 1
	b.trim()
}

// trim drops the oldest lines past the bounds.
func (b *ciBuf) trim() {
	for len(b.lines)-b.start > ciMaxLines || b.bytes > ciMaxBytes && len(b.lines)-b.start > 1 {
		b.bytes -= len(b.lines[b.start].text) + 1
		b.lines[b.start] = ciLine{}
		b.start++
		b.dropped++
	}
	if b.start >= ciMaxLines {
		// Move the kept lines down, so that the array stays at most twice the bound.
		n := copy(b.lines, b.lines[b.start:])
		clear(b.lines[n:])
		b.lines, b.start = b.lines[:n], 0
	}
}

func (b *ciBuf) kept() []ciLine { return b.lines[b.start:] }

// merge adds the lines of o (a child's) in the order the records came.
func (b *ciBuf) merge(o *ciBuf) {
	b.dropped += o.dropped
	mine, theirs := b.kept(), o.kept()
	out := make([]ciLine, 0, len(mine)+len(theirs))
	for len(mine) > 0 && len(theirs) > 0 {
		if theirs[0].seq < mine[0].seq {
			out, theirs = append(out, theirs[0]), theirs[1:]
		} else {
			out, mine = append(out, mine[0]), mine[1:]
		}
	}
	out = append(append(out, mine...), theirs...)
	b.lines, b.start = out, 0
	b.bytes += o.bytes
	b.trim()
}

// ciSection is a GitLab section printed open, waiting for its end.
type ciSection struct {
	tree  uint64
	span  trace.SpanID // zero for the operation's own section
	name  string
	start time.Time
}

// ciRenderer draws the CI format. It is owned by the exporter's goroutine, as liveRenderer is, and
// uses a plain-mode liveRenderer for the lines it shares with plain mode (records, headers,
// progress throttling, heartbeats, the failure summary).
type ciRenderer struct {
	flavor  ciFlavor
	r       *liveRenderer
	summary string // GITHUB_STEP_SUMMARY's file

	bufs  map[trace.SpanID]*ciBuf
	order []trace.SpanID        // the buffers by creation, for an operation's end
	outer map[trace.SpanID]bool // parts with groups under them
	open  []ciSection           // GitLab's open sections, outermost first
	seq   int                   // the last section's number
	lines uint64                // the last line's number
}

func newCIRenderer(flavor ciFlavor, r *liveRenderer, getenv func(string) string) *ciRenderer {
	c := &ciRenderer{flavor: flavor, r: r, bufs: map[trace.SpanID]*ciBuf{}, outer: map[trace.SpanID]bool{}}
	r.width = 0 // no terminal: a row's right part follows two spaces, and nothing is cut
	if flavor == ciGitHub {
		c.summary = getenv("GITHUB_STEP_SUMMARY")
	}
	return c
}

// print renders notes, as liveRenderer.print does for the other modes.
func (c *ciRenderer) print(notes []liveNote, dropped int) {
	r := c.r
	if dropped > 0 {
		r.p.line(droppedLine(r.p.buf[:0], dropped, r.p.color))
	}
	for i := range notes {
		n := &notes[i]
		switch n.kind {
		case noteText:
			r.p.line(c.safeLine(n.text))
		case noteRecord:
			r.p.record(n.rec, false)
		case noteLine:
			c.line(n)
		case noteFinished:
			c.finished(n)
		case noteEnded:
			c.ended(n)
		}
	}
}

// safeLine keeps a program's line from being read as a workflow command on GitHub: the runner
// reads a line that starts with "::" (after blanks) as one.
func (c *ciRenderer) safeLine(line []byte) []byte {
	if c.flavor == ciGitHub && bytes.HasPrefix(bytes.TrimLeft(line, " \t"), []byte("::")) {
		return append([]byte("\u200b"), line...) // a zero-width space: not a blank to the runner
	}
	return line
}

// line takes a record of an operation: printed now when it is the operation's own (its head
// span's, or no span's), else held back with its part.
func (c *ciRenderer) line(n *liveNote) {
	span := n.rec.SpanID()
	if !span.IsValid() || span == n.tree.span {
		c.openTree(&n.tree, n.tree.start)
		c.r.printPlain(n)
		return
	}
	b := c.bufs[span]
	if b == nil {
		b = &ciBuf{tree: n.tree.id}
		c.bufs[span] = b
		c.remember(span)
	}
	r := c.r
	v := tncomessage.GetView()
	v.Load(n.rec)
	r.p.buf = r.p.bare.appendView(r.p.buf[:0], n.rec, v)
	tncomessage.PutView(v)
	c.lines++
	b.add(ciLine{c.lines, bytes.Clone(r.p.buf[:len(r.p.buf)-1])})
}

// remember adds span to the buffers' order, dropping the spans whose buffers are gone once they
// are most of it, so that a long operation's order stays as long as its buffers.
func (c *ciRenderer) remember(span trace.SpanID) {
	if len(c.order) > 64 && len(c.order) > 2*len(c.bufs) {
		kept := c.order[:0]
		for _, s := range c.order {
			if c.bufs[s] != nil {
				kept = append(kept, s)
			}
		}
		clear(c.order[len(kept):])
		c.order = kept
	}
	c.order = append(c.order, span)
}

// take removes and returns span's buffer, nil when it has none.
func (c *ciRenderer) take(span trace.SpanID) *ciBuf {
	b := c.bufs[span]
	if b != nil {
		delete(c.bufs, span)
	}
	return b
}

// finished takes a part that finished: a leaf under a group hands its lines to the group; a group
// is printed as one fold; an outer part prints what it held back and closes its section.
func (c *ciRenderer) finished(n *liveNote) {
	last := len(n.nodes) - 1
	part := &n.nodes[last]
	var parent *snapNode
	if last > 0 {
		parent = &n.nodes[last-1]
		if part.grouped {
			c.outer[parent.span] = true
		}
	}
	switch {
	case c.outer[part.span]:
		delete(c.outer, part.span)
		c.finishOuter(n)
	case part.grouped || parent == nil || parent.op:
		c.group(n)
	default:
		if b := c.take(part.span); b != nil {
			pb := c.bufs[parent.span]
			if pb == nil {
				pb = &ciBuf{tree: b.tree}
				c.bufs[parent.span] = pb
				c.remember(parent.span)
			}
			pb.merge(b)
		}
	}
}

// group prints a finished task or resource operation with the lines it held back.
func (c *ciRenderer) group(n *liveNote) {
	r := c.r
	t := &n.tree
	last := len(n.nodes) - 1
	part := &n.nodes[last]
	b := c.take(part.span)
	failed := part.status.failure()
	if c.flavor == ciGitLab {
		c.openTo(t, n.nodes[:last], part.start)
		c.printAncestors(n.nodes[:last])
		name := c.sectionName()
		opts := "[collapsed=true]"
		if failed {
			opts = ""
		}
		r.p.q = c.sectionStart(r.p.q, part.start, name, opts)
		c.partRow(t, n.nodes[last:], false, r.p.color)
		c.printBuf(b)
		r.p.q = c.sectionEnd(r.p.q, part.end, name)
		return
	}
	r.plainHeader(t)
	c.printAncestors(n.nodes[:last])
	if failed {
		c.partRow(t, n.nodes, true, r.p.color) // open: outside any group
		c.printBuf(b)
		return
	}
	r.p.q = append(r.p.q, "::group::"...)
	at := len(r.p.q)
	c.partRow(t, n.nodes, true, false) // the runner shows a group's title without colours
	if title := r.p.q[at : len(r.p.q)-1]; bytes.IndexByte(title, '%') >= 0 {
		// The runner unescapes a command's message: a '%' must reach it as %25.
		escaped := appendEscaped(nil, string(title), false)
		r.p.q = append(append(r.p.q[:at], escaped...), '\n')
	}
	c.printBuf(b)
	r.p.line([]byte("::endgroup::"))
}

// printAncestors prints what the parts above a group held back (a play's start), before it.
func (c *ciRenderer) printAncestors(chain []snapNode) {
	for i := range chain {
		c.printBuf(c.take(chain[i].span))
	}
}

// finishOuter prints what an outer part (a play) held back and its row, and ends its section.
func (c *ciRenderer) finishOuter(n *liveNote) {
	r := c.r
	t := &n.tree
	last := len(n.nodes) - 1
	part := &n.nodes[last]
	b := c.take(part.span)
	if c.flavor == ciGitLab {
		c.openTo(t, n.nodes, part.start)
		c.printBuf(b)
		c.partRow(t, n.nodes[last:], false, r.p.color)
		c.closeTo(t.id, n.nodes[:last], part.end)
		return
	}
	r.plainHeader(t)
	c.printBuf(b)
	c.partRow(t, n.nodes, true, r.p.color)
}

// ended prints an operation's end: what its parts still held back, its final row, its failure
// summary, the annotations and the step summary.
func (c *ciRenderer) ended(n *liveNote) {
	r := c.r
	t := &n.tree
	c.openTree(t, t.end)
	kept := c.order[:0]
	for _, span := range c.order {
		b := c.bufs[span]
		switch {
		case b == nil:
		case b.tree == t.id:
			c.printBuf(b)
			delete(c.bufs, span)
		default:
			kept = append(kept, span)
		}
	}
	clear(c.order[len(kept):])
	c.order = kept
	for i := range n.nodes {
		delete(c.outer, n.nodes[i].span)
	}
	if c.flavor == ciGitLab {
		c.closeTo(t.id, nil, t.end)
	}
	r.headerRow(&r.row, t, n.wall, r.p.color) // the operation's outcome and duration
	r.printRow(&r.row)
	r.printFailures(t, n.nodes)
	if c.flavor == ciGitLab {
		c.closeTree(t.id, t.end)
		r.lastHeader = 0
		return
	}
	failures := ciFailures(t, n.nodes)
	for _, f := range failures {
		r.p.q = appendAnnotation(r.p.q, f.path, f.msg)
	}
	if c.summary != "" {
		writeSummary(c.summary, t, failures)
	}
}

// printBuf prints the lines b held back, after a line counting those it did not keep.
func (c *ciRenderer) printBuf(b *ciBuf) {
	if b == nil {
		return
	}
	r := c.r
	if b.dropped > 0 {
		r.printLine(0, sgrDim, "… "+strconv.Itoa(b.dropped)+" earlier lines not kept")
	}
	for _, l := range b.kept() {
		r.p.line(l.text)
	}
}

// partRow prints a part's row: its glyph, its path from the first of nodes (the whole path on
// GitHub, the part alone in GitLab's nested sections), its counts or status and its duration.
func (c *ciRenderer) partRow(t *snapTree, nodes []snapNode, path, color bool) {
	r := c.r
	row := &r.row
	part := &nodes[len(nodes)-1]
	row.reset(color)
	l := looks[part.status]
	row.add(l.code, l.glyph)
	row.space(1)
	if path {
		for i := range nodes[:len(nodes)-1] {
			row.add("", nodes[i].label)
			row.add(sgrDim, " › ")
		}
	}
	row.add(sgrBold, part.label)
	switch {
	case part.grouped:
		appendCounts(row, &part.counts)
	case statusWords[part.status] != "":
		row.space(2)
		row.add(l.code, statusWords[part.status])
	}
	if part.msg != "" {
		row.space(2)
		row.add("", part.msg)
	}
	row.setRight(sgrDim, string(appendDuration(nil, part.end.Sub(part.start), false)))
	r.printRow(row)
}

// openTree makes sure the operation's header is printed: GitHub's header line (printPlain's), or
// GitLab's section for the operation, closing the sections of other parts at time at.
func (c *ciRenderer) openTree(t *snapTree, at time.Time) {
	if c.flavor == ciGitLab {
		c.openTo(t, nil, at)
	}
}

// openTo makes GitLab's open sections those of t and of the outer parts in chain, outermost first,
// closing the sections of other parts first, at time at (a section cannot end inside another).
func (c *ciRenderer) openTo(t *snapTree, chain []snapNode, at time.Time) {
	r := c.r
	want := 1 + len(chain)
	same := 0
	for same < len(c.open) && same < want {
		o := &c.open[same]
		if o.tree != t.id || same > 0 && o.span != chain[same-1].span {
			break
		}
		same++
	}
	for len(c.open) > same {
		c.closeLast(at)
	}
	for i := same; i < want; i++ {
		s := ciSection{tree: t.id, name: c.sectionName(), start: t.start}
		if i > 0 {
			s.span, s.start = chain[i-1].span, chain[i-1].start
		}
		r.p.q = c.sectionStart(r.p.q, s.start, s.name, "")
		if i == 0 {
			r.headerText(&r.row, t, r.p.color, false)
		} else {
			r.row.reset(r.p.color)
			r.row.add(sgrBold, chain[i-1].label)
		}
		r.printRow(&r.row)
		c.open = append(c.open, s)
		if i > 0 {
			c.printBuf(c.take(s.span)) // what the part said before its first group
		}
	}
	r.lastHeader = t.id // the section is the header
}

// closeTo closes the open sections of tree id below chain (the part after chain's last included).
func (c *ciRenderer) closeTo(id uint64, chain []snapNode, at time.Time) {
	for len(c.open) > 1+len(chain) && c.open[len(c.open)-1].tree == id {
		c.closeLast(at)
	}
}

// closeTree closes every open section of tree id, its own last.
func (c *ciRenderer) closeTree(id uint64, at time.Time) {
	for len(c.open) > 0 && c.open[len(c.open)-1].tree == id {
		c.closeLast(at)
	}
	for i := range c.open {
		if c.open[i].tree == id { // under another tree's sections: close down to it
			for len(c.open) > i {
				c.closeLast(at)
			}
			break
		}
	}
}

func (c *ciRenderer) closeLast(at time.Time) {
	s := c.open[len(c.open)-1]
	c.open = c.open[:len(c.open)-1]
	if at.Before(s.start) {
		at = s.start // closed early, for another part's section: it cannot end before it started
	}
	c.r.p.q = c.sectionEnd(c.r.p.q, at, s.name)
}

// sectionName is a new section's name: GitLab's names are letters, digits, '_', '.' and '-'.
func (c *ciRenderer) sectionName() string {
	c.seq++
	return "progressotel_" + strconv.Itoa(c.seq)
}

// sectionStart appends ESC[0Ksection_start:<unix seconds>:<name><opts>\r ESC[0K: the header follows
// on the same line.
func (c *ciRenderer) sectionStart(dst []byte, at time.Time, name, opts string) []byte {
	dst = append(dst, "\x1b[0Ksection_start:"...)
	dst = strconv.AppendInt(dst, at.Unix(), 10)
	dst = append(append(append(dst, ':'), name...), opts...)
	return append(dst, "\r\x1b[0K"...)
}

// sectionEnd appends the line ESC[0Ksection_end:<unix seconds>:<name>\r ESC[0K.
func (c *ciRenderer) sectionEnd(dst []byte, at time.Time, name string) []byte {
	dst = append(dst, "\x1b[0Ksection_end:"...)
	dst = strconv.AppendInt(dst, at.Unix(), 10)
	dst = append(append(append(dst, ':'), name...), "\r\x1b[0K"...)
	return append(dst, '\n')
}

// ciFailure is a failure as an annotation and the step summary say it.
type ciFailure struct {
	path, msg string
	status    liveStatus
}

// ciFailures lists the failures of an operation that ended, where they happened (printFailures'
// choice: the deepest, and a part above them whose records said why), else the operation's own.
func ciFailures(t *snapTree, rows []snapNode) []ciFailure {
	var out []ciFailure
	listed := make([]bool, len(rows))
	for i := range rows {
		n := &rows[i]
		if !n.status.failure() || n.kind == kindEvent || n.failedBelow && !n.told {
			continue
		}
		listed[i] = true
		cause := true // a failure is annotated once, at its cause: not under a listed ancestor
		for a := n.parent; a >= 0; a = rows[a].parent {
			if listed[a] {
				cause = false
			}
		}
		if !cause {
			continue
		}
		var path []string
		for a := i; a >= 0 && len(path) < 8; a = rows[a].parent {
			path = append(path, rows[a].label)
		}
		if path[len(path)-1] != t.name() { // a run's tree has the operation's own row first: not twice
			path = append(path, t.name())
		}
		slices.Reverse(path)
		out = append(out, ciFailure{path: strings.Join(path, " › "), msg: cmpOr(n.msg, statusWords[n.status]), status: n.status})
	}
	if len(out) == 0 && t.status == stFailed {
		out = append(out, ciFailure{path: t.name(), msg: cmpOr(t.msg, statusWords[stFailed]), status: stFailed})
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// appendAnnotation appends ::error title=<title>::<message>, escaped as the runner reads them:
// in the message %, CR and LF; in a property also ':' and ','.
func appendAnnotation(dst []byte, title, msg string) []byte {
	dst = append(dst, "::error title="...)
	dst = appendEscaped(dst, title, true)
	dst = append(dst, "::"...)
	dst = appendEscaped(dst, msg, false)
	return append(dst, '\n')
}

func appendEscaped(dst []byte, s string, property bool) []byte {
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '%':
			dst = append(dst, "%25"...)
		case ch == '\r':
			dst = append(dst, "%0D"...)
		case ch == '\n':
			dst = append(dst, "%0A"...)
		case property && ch == ':':
			dst = append(dst, "%3A"...)
		case property && ch == ',':
			dst = append(dst, "%2C"...)
		default:
			dst = append(dst, ch)
		}
	}
	return dst
}

// writeSummary appends an operation's outcome, counts and failures in Markdown to GitHub's step
// summary file. A file that cannot be written loses the summary, not the log.
func writeSummary(file string, t *snapTree, failures []ciFailure) {
	var b strings.Builder
	word := "done"
	if t.status.failure() {
		word = statusWords[t.status]
	}
	b.WriteString("### " + looks[t.status].glyph + " " + mdEscape(t.name()))
	if t.op != "" && t.resource != "" {
		b.WriteString(" · `" + strings.ReplaceAll(t.resource, "`", "'") + "`")
	}
	b.WriteString("\n\n**" + word + "** in " + string(appendDuration(nil, t.end.Sub(t.start), false)))
	var counts []string
	for s := numStatus - 1; s >= stSkipped; s-- {
		if k := t.counts[s]; k > 0 {
			counts = append(counts, strconv.Itoa(int(k))+" "+looks[s].count)
		}
	}
	if len(counts) > 0 {
		b.WriteString(": " + strings.Join(counts, " · "))
	}
	if t.bar.ok && t.bar.total > 0 {
		b.WriteString(" (" + barText(t) + ")")
	}
	b.WriteString("\n\n")
	if len(failures) > 0 {
		b.WriteString("| Failed | Status | Message |\n|---|---|---|\n")
		for _, f := range failures {
			b.WriteString("| " + mdCell(f.path) + " | " + statusWords[f.status] + " | " + mdCell(f.msg) + " |\n")
		}
		b.WriteString("\n")
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	_, _ = f.WriteString(b.String())
	_ = f.Close()
}

// mdEscape keeps text from being read as Markdown or HTML.
func mdEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_{}[]<>()#+!|~", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// mdCell is text for a table cell: escaped, on one line.
func mdCell(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(mdEscape(s))
}
