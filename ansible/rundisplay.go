package ansible

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/rivo/uniseg"
)

// exactDisplay writes ansible-playbook's display text as the bare command
// writes it to its stdout (RunCommandLine): each job event's text with its
// line ends and blank lines back (runner strips the trailing ones and
// counts them in start_line and end_line), colours kept, and the task
// arguments that ANSIBLE_DISPLAY_ARGS_TO_STDOUT added to a task banner
// taken out again, its stars counted anew.
type exactDisplay struct {
	w         io.Writer
	stripArgs bool // the wrapper, not the user, asked for the arguments
	columns   int  // Ansible's display width on runner's terminal
}

// show writes the display text of e: through exactDisplay under
// RunCommandLine, else cleaned (adapter.Config.Show).
func (d *decoder) show(e *jobEvent) {
	if d.display == nil {
		d.cfg.Show(e.Stdout)
		return
	}
	d.display.event(e)
}

func (x *exactDisplay) event(e *jobEvent) {
	if x.w == nil {
		return
	}
	text := e.Stdout
	lines := e.EndLine - e.StartLine
	if text == "" && lines <= 0 {
		return
	}
	// Runner reads a terminal, whose line ends are \r\n.
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if missing := lines - strings.Count(text, "\n"); missing > 0 {
		text += strings.Repeat("\n", missing)
	}
	if x.stripArgs && e.Data.TaskArgs != "" {
		text = stripBannerArgs(text, e.Data.TaskArgs, x.columns)
	}
	_, _ = io.WriteString(x.w, text)
}

// stripBannerArgs removes " ARGS" from a task banner in text, "TASK [name
// ARGS] ****" (or RUNNING HANDLER, with or without " [CHECK MODE]"), and
// pads it with stars as Ansible's Display.banner does for the name alone:
// columns less the text's width, 3 at least.
func stripBannerArgs(text, args string, columns int) string {
	needle := " " + args + "]"
	for end := len(text); end > 0; {
		i := strings.LastIndex(text[:end], needle)
		if i < 0 {
			return text
		}
		end = i
		rest := text[i+len(needle):]
		check := ""
		if strings.HasPrefix(rest, " [CHECK MODE]") {
			check, rest = " [CHECK MODE]", rest[len(" [CHECK MODE]"):]
		}
		stars := len(rest) - len(strings.TrimLeft(strings.TrimPrefix(rest, " "), "*")) - 1
		if !strings.HasPrefix(rest, " ***") || (len(rest) > stars+1 && rest[stars+1] != '\n') {
			continue
		}
		lineStart := strings.LastIndexByte(text[:i], '\n') + 1
		msg := text[lineStart:i] + "]" + check
		n := max(3, columns-uniseg.StringWidth(msg))
		return text[:lineStart] + msg + " " + strings.Repeat("*", n) + rest[stars+1:]
	}
	return text
}

// displayColumns is Ansible's display width for a terminal of width cols
// (Display._set_column_width); runner's terminal is 80 wide unless set.
func displayColumns(cols int) int {
	if cols == 0 {
		cols = 80
	}
	return max(79, cols-1)
}

// cowsayBanners reports whether Ansible, with env, draws its banners with
// cowsay (found where Display looks for it, and not turned off): the
// arguments could not be taken out of a cow's balloon.
func cowsayBanners(env []string) bool {
	if v, ok := lookupEnv(env, "ANSIBLE_NOCOWS"); ok && truthy(v) {
		return false
	}
	paths := []string{"/usr/bin/cowsay", "/usr/games/cowsay", "/usr/local/bin/cowsay", "/opt/local/bin/cowsay"}
	if p, ok := lookupEnv(env, "ANSIBLE_COW_PATH"); ok && p != "" {
		paths = append(paths, p)
	}
	return slices.ContainsFunc(paths, func(p string) bool {
		fi, err := os.Stat(filepath.Clean(p))
		return err == nil && !fi.IsDir()
	})
}

// lookupEnv is the value of name in env, the last one as exec.Cmd takes it.
func lookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// truthy is Ansible's boolean reading of a setting.
func truthy(v string) bool {
	return slices.Contains([]string{"y", "yes", "on", "1", "true", "t"}, strings.ToLower(strings.TrimSpace(v)))
}

// markers matches the event markers ansible-runner's display callback
// writes around a display outside a callback (a warning, an error):
// ESC[K, base64 chunks each followed by ESC[<n>D, ESC[K.
var markers = regexp.MustCompile(`\x1b\[K(?:[A-Za-z0-9+/=]+\x1b\[\d+D)+\x1b\[K`)

// markerStripper writes what is written to it without runner's event
// markers: it holds back the end of a write that may begin one.
type markerStripper struct {
	w       io.Writer
	pending []byte
}

func (m *markerStripper) Write(p []byte) (int, error) {
	m.pending = append(m.pending, p...)
	b := markers.ReplaceAll(m.pending, nil)
	keep := len(b) - markerStart(b)
	if _, err := m.w.Write(b[:len(b)-keep]); err != nil {
		return len(p), err
	}
	m.pending = append(m.pending[:0], b[len(b)-keep:]...)
	return len(p), nil
}

// flush writes what is held back: the output has ended.
func (m *markerStripper) flush() {
	if len(m.pending) > 0 {
		_, _ = m.w.Write(m.pending)
		m.pending = m.pending[:0]
	}
}

// markerStart is where a marker that may not have been written whole
// begins in b, len(b) if none: the last ESC[K followed only by what a
// marker holds, or an ESC or ESC[ at the very end.
func markerStart(b []byte) int {
	if i := bytes.LastIndex(b, []byte("\x1b[K")); i >= 0 {
		inMarker := func(r rune) bool {
			return r == '\x1b' || r == '[' || r == '+' || r == '/' || r == '=' ||
				'0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
		}
		if bytes.IndexFunc(b[i+3:], func(r rune) bool { return !inMarker(r) }) < 0 {
			return i
		}
	}
	switch {
	case bytes.HasSuffix(b, []byte("\x1b")):
		return len(b) - 1
	case bytes.HasSuffix(b, []byte("\x1b[")):
		return len(b) - 2
	}
	return len(b)
}

// plainLines takes every line of runner's stdout (adapter.Config.RawTee:
// each line, then its newline) and writes those that are not job events
// to w: ansible-playbook's text from before its display callback was
// loaded ("No config file found; using defaults" under -v), which runner
// passes on as it is.
type plainLines struct {
	w    io.Writer
	line []byte
}

func (p *plainLines) Write(b []byte) (int, error) {
	p.line = append(p.line, b...)
	for {
		i := bytes.IndexByte(p.line, '\n')
		if i < 0 {
			return len(b), nil
		}
		if l := p.line[:i]; len(l) == 0 || l[0] != '{' {
			_, _ = p.w.Write(append(bytes.TrimSuffix(l, []byte("\r")), '\n'))
		}
		p.line = p.line[i+1:]
	}
}
