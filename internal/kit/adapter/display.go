package adapter

import (
	"io"

	"github.com/progressotel/progressotel/internal/base/tooltext"
)

// Show writes text, the tool's own text of one message or event (Ansible's
// display text, an OpenTofu @message, a line that was no message), to
// Display as one or more lines, cleaned of terminal escapes and control
// characters (see tooltext.Text). It does nothing without a Display or
// for an empty text.
func (c *Config) Show(text string) {
	if c.Display == nil || text == "" {
		return
	}
	text = tooltext.Text(text, 0)
	if text == "" {
		return
	}
	if text[len(text)-1] != '\n' {
		text += "\n"
	}
	_, _ = io.WriteString(c.Display, text)
}
