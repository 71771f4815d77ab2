package main

import (
	"bytes"
	"flag"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/progressotel/progressotel/internal/testkit/testutil"
)

var updateScreenshot = flag.Bool("screenshot.update", false, "rewrite docs/img/live-view.svg from this run")

// TestREADMEScreenshot: the README's screenshot, docs/img/live-view.svg, is `make demo`'s real
// final screen in a tmux pane of 104×30, with its colours. The test runs the demo and compares the
// screen with the picture's text, its numbers (durations, counts, trace ids) aside, so that the
// picture cannot drift from what the view prints; -screenshot.update redraws it from the run.
func TestREADMEScreenshot(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no program in tmux")
	}
	tmux := testutil.RequireTool(t, "tmux", "apt-get install tmux")
	root := testutil.RepoRoot(t)
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).Output()
		if err != nil {
			t.Fatalf("tmux %v: %v", args, err)
		}
		return string(out)
	}
	const cols, rows = 104, 30
	run("-f", "/dev/null", "new-session", "-d", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), "-c", root, "-s", "shot",
		"sh", "-c", "printf '$ make demo\\n'; make --no-print-directory demo; echo __EXIT=$?; sleep 600")
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", sock, "kill-server").Run() })
	deadline := time.Now().Add(5 * time.Minute)
	for !strings.Contains(run("capture-pane", "-p", "-t", "shot"), "__EXIT=") {
		if time.Now().After(deadline) {
			t.Fatalf("make demo did not end:\n%s", run("capture-pane", "-p", "-t", "shot"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	screen := run("capture-pane", "-p", "-e", "-t", "shot")
	var lines []string
	for l := range strings.SplitSeq(strings.TrimRight(screen, "\n"), "\n") {
		if strings.Contains(l, "__EXIT=") {
			if !strings.Contains(l, "__EXIT=0") {
				t.Fatalf("make demo failed:\n%s", screen)
			}
			break
		}
		lines = append(lines, l)
	}
	for len(lines) > 0 && strings.TrimSpace(sgr.ReplaceAllString(lines[len(lines)-1], "")) == "" {
		lines = lines[:len(lines)-1]
	}
	if !strings.Contains(screen, "running the real playbook") {
		t.Skipf("not a real Ansible run (the replay differs):\n%s", screen)
	}
	svg := screenshotSVG(lines, cols)
	path := filepath.Join(root, "docs", "img", "live-view.svg")
	if *updateScreenshot {
		if err := os.WriteFile(path, svg, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run TestREADMEScreenshot ./examples/ansible-driver -args -screenshot.update draws it)", err)
	}
	if got, want := svgText(svg), svgText(old); got != want {
		t.Errorf("docs/img/live-view.svg is not make demo's final screen any more (go test -run TestREADMEScreenshot ./examples/ansible-driver -args -screenshot.update redraws it):\n%s",
			testutil.DiffLines(want, got))
	}
}

var (
	sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")
	// What differs from run to run: trace ids, durations (and the padding before them), counts.
	traceID   = regexp.MustCompile(`trace [0-9a-f]{8}`)
	durations = regexp.MustCompile(`\b[0-9]+(\.[0-9]+)?s\b|\b[0-9]+m[0-9]+s\b|\b[0-9]+h[0-9]+m\b`)
	numbers   = regexp.MustCompile(`[0-9]+`)
	spaces    = regexp.MustCompile(` +`)
	tspans    = regexp.MustCompile(`<text [^>]*>(.*)</text>`)
	tags      = regexp.MustCompile(`<[^>]*>`)
)

// svgText is the text of a screenshot, line by line, what differs from run to run masked.
func svgText(svg []byte) string {
	var b strings.Builder
	for _, m := range tspans.FindAllSubmatch(svg, -1) {
		line := html.UnescapeString(tags.ReplaceAllString(string(m[1]), ""))
		line = traceID.ReplaceAllString(line, "trace X")
		line = durations.ReplaceAllString(line, "T")
		line = spaces.ReplaceAllString(numbers.ReplaceAllString(line, "#"), " ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// The colours of a dark terminal, by SGR foreground code.
var palette = map[int]string{
	30: "#555", 31: "#e06c75", 32: "#98c379", 33: "#e5c07b", 34: "#61afef", 35: "#c678dd", 36: "#56b6c2", 37: "#ddd",
	90: "#777", 91: "#ff7b86", 92: "#b5e890", 93: "#ffd98a", 94: "#82c4ff", 95: "#e09cf0", 96: "#7fd4de", 97: "#fff",
}

// screenshotSVG draws lines, with their SGR colours, as a terminal of cols columns.
func screenshotSVG(lines []string, cols int) []byte {
	const cw, lh, pad = 9, 19, 16
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="15">`+"\n",
		cols*cw+2*pad, len(lines)*lh+2*pad)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" rx="6" fill="#1e1e1e"/>`+"\n")
	for i, l := range lines {
		fmt.Fprintf(&b, `<text x="%d" y="%d" xml:space="preserve">`, pad, pad+(i+1)*lh-5)
		fg, bold, dim := "", false, false
		rest := l
		for rest != "" {
			loc := sgr.FindStringIndex(rest)
			text := rest
			if loc != nil {
				text = rest[:loc[0]]
			}
			if text != "" {
				attrs := ""
				switch {
				case fg != "":
					attrs += ` fill="` + fg + `"`
				case dim:
					attrs += ` fill="#888"`
				default:
					attrs += ` fill="#ddd"`
				}
				if bold {
					attrs += ` font-weight="bold"`
				}
				fmt.Fprintf(&b, `<tspan%s>%s</tspan>`, attrs, html.EscapeString(text))
			}
			if loc == nil {
				break
			}
			params := strings.Split(strings.Trim(rest[loc[0]+2:loc[1]-1], ";"), ";")
			for j := 0; j < len(params); j++ {
				n, _ := strconv.Atoi(params[j])
				switch {
				case n == 0:
					fg, bold, dim = "", false, false
				case n == 1:
					bold = true
				case n == 2:
					dim = true
				case n == 22:
					bold, dim = false, false
				case n == 39:
					fg = ""
				case n == 38 || n == 48:
					j += 2 // 256 colours: not used by the view
				case palette[n] != "":
					fg = palette[n]
				}
			}
			rest = rest[loc[1]:]
		}
		b.WriteString("</text>\n")
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}
