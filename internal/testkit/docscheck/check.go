// Package docscheck keeps the repository and its docs honest: no large
// file outside testdata, no broken relative link or anchor in the
// Markdown, no test named in prose that does not exist (Check, run by make
// lint through repocheck), and every Go block of the docs compiles.
package docscheck

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// MaxFileSize is the largest tracked file allowed outside a testdata
// directory: a build output or a data dump does not belong in the
// repository.
const MaxFileSize = 1 << 20

// Problem is one finding of Check: a file, the line (0: the whole file)
// and what is wrong.
type Problem struct {
	File string
	Line int
	Msg  string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
	return p.File + ": " + p.Msg
}

// TrackedFiles returns the files git tracks under root, slash-separated
// and relative to it, leaving out those deleted from the work tree.
func TrackedFiles(root string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	var files []string
	for f := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if f == "" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(root, f)); err == nil {
			files = append(files, f)
		}
	}
	return files, nil
}

// Check runs every check on files (relative to root): LargeFiles,
// BrokenLinks and MissingTests.
func Check(root string, files []string) []Problem {
	return slices.Concat(LargeFiles(root, files), BrokenLinks(root, files), MissingTests(root, files))
}

// LargeFiles reports each file over MaxFileSize outside testdata.
func LargeFiles(root string, files []string) []Problem {
	var ps []Problem
	for _, f := range files {
		if slices.Contains(strings.Split(f, "/"), "testdata") {
			continue
		}
		fi, err := os.Lstat(filepath.Join(root, f))
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if fi.Size() > MaxFileSize {
			ps = append(ps, Problem{File: f, Msg: fmt.Sprintf("%d bytes, over the %d allowed outside testdata (a build output? ignore it)", fi.Size(), MaxFileSize)})
		}
	}
	return ps
}

// link is an inline Markdown link or image, [text](target), or a
// reference definition, [label]: target.
var (
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refLink    = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+.*)?$`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
)

// BrokenLinks reports each relative link of a Markdown file whose target
// does not exist, or whose #anchor names no heading (or <a name>) of the
// Markdown file it points to. Links inside code are not links.
func BrokenLinks(root string, files []string) []Problem {
	anchors := map[string]map[string]bool{} // by file, lazily
	anchorsOf := func(f string) map[string]bool {
		if a, ok := anchors[f]; ok {
			return a
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return nil
		}
		a := headingAnchors(b)
		anchors[f] = a
		return a
	}
	var ps []Problem
	for _, f := range files {
		if !strings.HasSuffix(f, ".md") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			ps = append(ps, Problem{File: f, Msg: err.Error()})
			continue
		}
		for n, line := range proseLines(b) {
			var targets []string
			for _, m := range inlineLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
				targets = append(targets, m[1])
			}
			if m := refLink.FindStringSubmatch(line); m != nil {
				targets = append(targets, m[1])
			}
			for _, t := range targets {
				if msg := checkTarget(root, f, t, anchorsOf); msg != "" {
					ps = append(ps, Problem{File: f, Line: n, Msg: msg})
				}
			}
		}
	}
	return ps
}

// checkTarget returns what is wrong with link target t of file f, or "".
func checkTarget(root, f, t string, anchorsOf func(string) map[string]bool) string {
	if strings.Contains(t, "://") || strings.HasPrefix(t, "mailto:") || strings.HasPrefix(t, "//") {
		return "" // not relative
	}
	p, anchor, _ := strings.Cut(t, "#")
	target := f
	if p != "" {
		if strings.HasPrefix(p, "/") {
			target = strings.TrimPrefix(path.Clean(p), "/")
		} else {
			target = path.Join(path.Dir(f), p)
		}
		if strings.HasPrefix(target, "../") || target == ".." {
			return fmt.Sprintf("link %q leaves the repository", t)
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(target))); err != nil {
			return fmt.Sprintf("link %q: %s does not exist", t, target)
		}
	}
	if anchor == "" || !strings.HasSuffix(target, ".md") {
		return ""
	}
	if !anchorsOf(target)[anchor] {
		return fmt.Sprintf("link %q: %s has no heading with anchor #%s", t, target, anchor)
	}
	return ""
}

// proseLines yields the lines of a Markdown file outside fenced code
// blocks, numbered from 1.
func proseLines(b []byte) func(func(int, string) bool) {
	return func(yield func(int, string) bool) {
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		fence := ""
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			trimmed := strings.TrimLeft(line, " ")
			if fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
				fence = trimmed[:3]
				continue
			}
			if fence != "" {
				if strings.HasPrefix(trimmed, fence) {
					fence = ""
				}
				continue
			}
			if !yield(n, line) {
				return
			}
		}
	}
}

// headingAnchors returns the anchors a code host gives the headings of a
// Markdown file (lower case, punctuation other than - and _ dropped,
// spaces to -, a repeated one suffixed -1, -2...), and <a name> anchors.
func headingAnchors(b []byte) map[string]bool {
	a := map[string]bool{}
	seen := map[string]int{}
	for _, line := range proseLines(b) {
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			a[m[1]] = true
		}
		if !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimLeft(line, "#")
		if len(line)-len(text) > 6 || (text != "" && text[0] != ' ') {
			continue
		}
		s := slug(text)
		if n := seen[s]; n > 0 {
			a[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			a[s] = true
		}
		seen[s]++
	}
	return a
}

var mdLinkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

func slug(heading string) string {
	heading = mdLinkText.ReplaceAllString(strings.TrimSpace(heading), "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// named is a Go test, fuzz target, benchmark or example named in prose.
var named = regexp.MustCompile(`\b(Test|Fuzz|Benchmark|Example)[A-Z][A-Za-z0-9_]*`)

// declared is a test function's declaration.
var declared = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark|Example)[A-Za-z0-9_]*)\(`)

// MissingTests reports each test, fuzz target, benchmark or example named
// in a Markdown file (CHANGELOG.md aside: it is history) or in a Go
// comment that no _test.go file among files declares. After -run or
// -bench, or before a *, a name is a pattern: a prefix of a declared
// name is enough. After a / it is a path or an event type, not a name.
func MissingTests(root string, files []string) []Problem {
	tests := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			b, err := os.ReadFile(filepath.Join(root, f))
			if err != nil {
				continue
			}
			for _, m := range declared.FindAllSubmatch(b, -1) {
				tests[string(m[1])] = true
			}
		}
	}
	var ps []Problem
	for _, f := range files {
		var text []string // by line, "" where nothing is prose
		switch {
		case strings.HasSuffix(f, ".md") && path.Base(f) != "CHANGELOG.md":
			b, err := os.ReadFile(filepath.Join(root, f))
			if err != nil {
				continue
			}
			text = strings.Split(string(b), "\n")
		case strings.HasSuffix(f, ".go"):
			b, err := os.ReadFile(filepath.Join(root, f))
			if err != nil {
				continue
			}
			text = goComments(b)
		default:
			continue
		}
		for i, line := range text {
			for _, loc := range named.FindAllStringIndex(line, -1) {
				name := line[loc[0]:loc[1]]
				if tests[name] || (loc[0] > 0 && line[loc[0]-1] == '/') { // terraform/TestRun is an event type
					continue
				}
				// After -run or -bench, or followed by *, a name is a
				// pattern: a prefix of a declared name is enough.
				before := line[max(0, loc[0]-12):loc[0]]
				pattern := strings.Contains(before, "-run") || strings.Contains(before, "-bench") || strings.HasPrefix(line[loc[1]:], "*")
				if pattern && hasPrefix(tests, name) {
					continue
				}
				ps = append(ps, Problem{File: f, Line: i + 1, Msg: fmt.Sprintf("names %s, which no _test.go declares", name)})
			}
		}
	}
	return ps
}

// goComments returns the lines of a Go file with only their // comment
// text kept (the rest blanked), so that line numbers stay. Block comments
// and comments inside strings are rare enough in this repository to be
// read as code.
func goComments(b []byte) []string {
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if j := strings.Index(l, "//"); j >= 0 && !strings.Contains(l[:j], `"`) && !strings.Contains(l[:j], "`") {
			lines[i] = l[j:]
		} else {
			lines[i] = ""
		}
	}
	return lines
}

func hasPrefix(tests map[string]bool, prefix string) bool {
	for name := range tests {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}
