package prettyexporter

import (
	"strconv"
	"strings"
	"time"
)

// The terminal's own progress bar (OSC 9;4: ESC ] 9 ; 4 ; state ; percent BEL), drawn by Windows
// Terminal, iTerm2, Ghostty, WezTerm, Konsole, VTE and recent kitty in the tab or the taskbar. The
// live view sends it with its frames, from the same snapshot. docs/configuration.md says how it is
// turned on or off.

// TerminalProgressEnv names the variable that turns the terminal's progress bar on or off: on,
// off, or auto (the default: on where the terminal is known to draw it, never under tmux or screen).
const TerminalProgressEnv = "PROGRESSOTEL_TERMINAL_PROGRESS"

// OSC 9;4 states.
const (
	progressClear         = 0
	progressNormal        = 1
	progressError         = 2
	progressIndeterminate = 3
)

// progressResend is how often an unchanged bar is sent again: Ghostty drops a bar after about 15 s
// without an update.
const progressResend = 10 * time.Second

// termProgress is the bar's state, owned by the exporter's goroutine.
type termProgress struct {
	on      bool
	shown   bool // a bar other than clear was sent last
	failed  bool // a failure counted since the bar appeared: state 2 until it clears
	state   int
	percent int
	sent    time.Time
}

// terminalProgressOn decides whether the live view sends OSC 9;4, from TerminalProgressEnv and,
// when that is auto or unset, from what the environment says of the terminal, as cargo does: the
// terminal names itself (TERM_PROGRAM, WT_SESSION, VTE_VERSION, KONSOLE_VERSION, kitty's
// variables with its version), and no multiplexer sits between (tmux and screen do not pass it
// through).
func terminalProgressOn(getenv func(string) string) bool {
	switch strings.ToLower(strings.TrimSpace(getenv(TerminalProgressEnv))) {
	case "on", "1", "true", "yes":
		return true
	case "off", "0", "false", "no":
		return false
	}
	term := getenv("TERM")
	if getenv("TMUX") != "" || getenv("STY") != "" || strings.HasPrefix(term, "screen") || strings.HasPrefix(term, "tmux") {
		return false
	}
	prog, version := getenv("TERM_PROGRAM"), getenv("TERM_PROGRAM_VERSION")
	switch {
	case getenv("WT_SESSION") != "": // Windows Terminal
		return true
	case getenv("ConEmuANSI") == "ON":
		return true
	case prog == "WezTerm", prog == "ghostty":
		return true
	case prog == "iTerm.app": // 3.6.6 added it
		return versionAtLeast(version, 3, 6, 6)
	case prog == "kitty" || getenv("KITTY_WINDOW_ID") != "" || term == "xterm-kitty":
		// 0.40 added it; kitty names its version only in TERM_PROGRAM_VERSION.
		return prog == "kitty" && versionAtLeast(version, 0, 40, 0)
	}
	if v, err := strconv.Atoi(getenv("VTE_VERSION")); err == nil && v >= 8000 { // VTE 0.80
		return true
	}
	if v, err := strconv.Atoi(getenv("KONSOLE_VERSION")); err == nil && v >= 230800 { // Konsole 23.08
		return true
	}
	return false
}

// versionAtLeast reports whether a dotted version is at least major.minor.patch.
func versionAtLeast(v string, want ...int) bool {
	parts := strings.Split(v, ".")
	for i, w := range want {
		n := 0
		if i < len(parts) {
			digits := parts[i]
			if j := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }); j >= 0 {
				digits = digits[:j]
			}
			var err error
			if n, err = strconv.Atoi(digits); err != nil {
				return false
			}
		}
		if n != w {
			return n > w
		}
	}
	return true
}

// update appends the bar's sequence to dst when it changed or is due again: from the first running
// operation's N of M (state 3 without a total), state 2 once a failure counted, state 0 when no
// operation is left or on the last frame. notes are those taken for this step: an operation that
// failed and ended between two frames still counts.
func (p *termProgress) update(dst []byte, s *liveSnap, notes []liveNote, now time.Time, final bool) []byte {
	if !p.on {
		return dst
	}
	for i := range notes {
		if n := &notes[i]; n.kind == noteEnded && (n.tree.status.failure() || countsFailure(&n.tree.counts)) {
			p.failed = true
		}
	}
	state, percent := progressClear, 0
	if !final {
		for i := range s.trees {
			t := &s.trees[i]
			if t.status.failure() || t.shown.failure() || countsFailure(&t.counts) {
				p.failed = true
			}
			for _, n := range s.nodes[t.lo:t.hi] {
				if n.status.failure() {
					p.failed = true
				}
			}
			if state != progressClear || t.status.finished() {
				continue
			}
			state = progressIndeterminate
			if t.bar.ok && t.bar.total > 0 {
				state, percent = progressNormal, int(min(max(t.bar.done*100/t.bar.total, 0), 100))
			}
		}
	}
	if state == progressClear {
		if !p.shown {
			return dst
		}
		p.failed = false
	} else if p.failed {
		if state == progressIndeterminate {
			percent = 100 // a full red bar: how far it got is not known
		}
		state = progressError
	}
	if p.shown && state == p.state && percent == p.percent && now.Sub(p.sent) < progressResend {
		return dst
	}
	p.state, p.percent, p.sent, p.shown = state, percent, now, state != progressClear
	return appendProgress(dst, state, percent)
}

// countsFailure reports whether finished children counted by status include a failure.
func countsFailure(c *[numStatus]int32) bool {
	for st := stCancelled; st < numStatus; st++ {
		if c[st] > 0 {
			return true
		}
	}
	return false
}

// appendProgress appends ESC ] 9 ; 4 ; state ; percent BEL.
func appendProgress(dst []byte, state, percent int) []byte {
	dst = append(dst, "\x1b]9;4;"...)
	dst = strconv.AppendInt(dst, int64(state), 10)
	dst = append(dst, ';')
	dst = strconv.AppendInt(dst, int64(percent), 10)
	return append(dst, '\a')
}
