// Package cisyntax checks a CI log against each CI's documented syntax
// (CONTEXT.md): GitHub Actions' workflow commands and GitLab's sections.
// The tests of the CI format use it, the exporter's and the CLI's.
package cisyntax

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// ghCommand is a workflow command line as the runner reads it: "::name props::message".
var ghCommand = regexp.MustCompile(`^::([a-z-]+)( [^:]*)?::(.*)$`)

// Annotation is an ::error annotation, unescaped.
type Annotation struct{ Title, Message string }

// Unescape reverses the runner's escaping of a command's message or property.
func Unescape(s string) string {
	return strings.NewReplacer("%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%").Replace(s)
}

// GitHub checks out against GitHub Actions' workflow command syntax: only
// group, endgroup and error commands; a group ends before the next begins
// (groups do not nest) and every group ends; the title property escaped.
// It returns the groups' titles, the lines outside any group, and the
// annotations.
func GitHub(t testing.TB, out string) (groups, outside []string, notes []Annotation) {
	t.Helper()
	in := false
	for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if strings.ContainsAny(l, "\x1b\r") {
			t.Errorf("line %d: a control character in %q", i+1, l)
		}
		if !strings.HasPrefix(strings.TrimLeft(l, " \t"), "::") {
			if !in {
				outside = append(outside, l)
			}
			continue
		}
		m := ghCommand.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("line %d: not a workflow command: %q", i+1, l)
			continue
		}
		switch m[1] {
		case "group":
			if in {
				t.Errorf("line %d: a group inside a group: %q", i+1, l)
			}
			in = true
			groups = append(groups, Unescape(m[3]))
		case "endgroup":
			if !in {
				t.Errorf("line %d: endgroup outside a group", i+1)
			}
			in = false
		case "error":
			props := strings.TrimPrefix(m[2], " ")
			title, ok := strings.CutPrefix(props, "title=")
			if !ok || strings.Contains(title, ",") {
				t.Errorf("line %d: error properties %q, want title=… escaped", i+1, props)
			}
			notes = append(notes, Annotation{Unescape(title), Unescape(m[3])})
		default:
			t.Errorf("line %d: unexpected command %q", i+1, m[1])
		}
	}
	if in {
		t.Error("a group never ended")
	}
	return groups, outside, notes
}

// Section is a GitLab section as parsed: its header, whether it starts
// collapsed, its lines (its subsections' included) and its times.
type Section struct {
	Name, Header string
	Collapsed    bool
	Start, End   int64
	Lines        []string
	Depth        int
	Parent       *Section
}

var (
	glStart = regexp.MustCompile("^\x1b\\[0Ksection_start:([0-9]+):([A-Za-z0-9_.-]+)(\\[collapsed=true\\])?\r\x1b\\[0K(.*)$")
	glEnd   = regexp.MustCompile("^\x1b\\[0Ksection_end:([0-9]+):([A-Za-z0-9_.-]+)\r\x1b\\[0K$")
)

// GitLab checks out against GitLab's section syntax: section_start with
// unix seconds, a name of letters, digits, '_', '.' and '-', optional
// [collapsed=true], CR, ESC[0K and the header; section_end with the same
// name, nested (the last opened ends first), no earlier than its start;
// every section ends, each name once; no other escape. It returns the
// sections in the order they started and the lines outside any section.
func GitLab(t testing.TB, out string) (all []*Section, outside []string) {
	t.Helper()
	var stack []*Section
	names := map[string]bool{}
	for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if m := glStart.FindStringSubmatch(l); m != nil {
			at, _ := strconv.ParseInt(m[1], 10, 64)
			if names[m[2]] {
				t.Errorf("line %d: section %s started twice", i+1, m[2])
			}
			names[m[2]] = true
			s := &Section{Name: m[2], Header: m[4], Collapsed: m[3] != "", Start: at, Depth: len(stack)}
			if len(stack) > 0 {
				s.Parent = stack[len(stack)-1]
			}
			stack = append(stack, s)
			all = append(all, s)
			continue
		}
		if m := glEnd.FindStringSubmatch(l); m != nil {
			at, _ := strconv.ParseInt(m[1], 10, 64)
			if len(stack) == 0 || stack[len(stack)-1].Name != m[2] {
				t.Errorf("line %d: section_end of %s, not the last section open", i+1, m[2])
				continue
			}
			s := stack[len(stack)-1]
			if s.End = at; at < s.Start {
				t.Errorf("section %s ends (%d) before it starts (%d)", s.Name, at, s.Start)
			}
			stack = stack[:len(stack)-1]
			continue
		}
		if strings.ContainsAny(l, "\x1b\r") {
			t.Errorf("line %d: an escape or CR outside a section marker: %q", i+1, l)
		}
		for _, s := range stack {
			s.Lines = append(s.Lines, l)
		}
		if len(stack) == 0 {
			outside = append(outside, l)
		}
	}
	for _, s := range stack {
		t.Errorf("section %s (%q) never ended", s.Name, s.Header)
	}
	return all, outside
}
