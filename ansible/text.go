package ansible

import (
	"strings"

	"github.com/progressotel/progressotel/internal/base/tooltext"
)

// cleanText makes Ansible's display text safe to log and to put in an
// error (see tooltext.Text: Ansible colours its output), cut to at most
// max bytes, without the spaces around it.
func cleanText(s string, max int) string {
	return strings.TrimSpace(tooltext.Text(s, max))
}

// tail keeps the last max lines of text, for error messages.
type tail struct {
	max   int
	lines []string
}

func (t *tail) add(text string) {
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimRight(l, " "); l == "" {
			continue
		}
		if len(t.lines) == t.max {
			copy(t.lines, t.lines[1:])
			t.lines = t.lines[:t.max-1]
		}
		t.lines = append(t.lines, l)
	}
}

func (t *tail) String() string { return strings.Join(t.lines, "\n") }
