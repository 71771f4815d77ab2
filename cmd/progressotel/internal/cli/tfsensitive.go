package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/progressotel/progressotel/internal/kit/cmdline"
)

// This file finds, for `run -- tofu ...`, the values of the variables that
// the configuration declares sensitive, so that the terraform adapter
// scrubs them from every event of the run (terraform.WithSensitiveValues):
// the tool hides them in its own messages, but not in what a provisioner
// prints. The wrapper cannot be told them, but it sees where they come
// from, as the tool does:
//
//   - the configuration's variable blocks with sensitive = true (*.tf and
//     *.tf.json in the working directory, -chdir's when given);
//   - their values from TF_VAR_<name>, terraform.tfvars(.json),
//     *.auto.tfvars(.json), -var-file and -var.
//
// It reads HCL only as far as these need: blocks, strings (escapes and
// heredocs), lists and maps of them, comments. A value in a form it does
// not read is not scrubbed by this; the Redactor's shapes still apply.

// sensitiveTofuValues returns the values that the command line argv (the
// tool and its arguments), the environment env and the files in cwd (or
// -chdir) give to sensitive variables.
func sensitiveTofuValues(argv, env []string, cwd string) []string {
	if len(argv) == 0 {
		return nil
	}
	global, _, rest, _ := cmdline.SplitSubcommand(argv[1:])
	dir := cwd
	for _, g := range global {
		if d, ok := strings.CutPrefix(g, "-chdir="); ok {
			if filepath.IsAbs(d) {
				dir = d
			} else {
				dir = filepath.Join(cwd, d)
			}
		}
	}
	names := sensitiveVariables(dir)
	if len(names) == 0 {
		return nil
	}
	var values []string
	take := func(name string, v []string) {
		if names[name] {
			values = append(values, v...)
		}
	}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "TF_VAR_") {
			take(strings.TrimPrefix(k, "TF_VAR_"), rawValue(v))
		}
	}
	files := []string{filepath.Join(dir, "terraform.tfvars"), filepath.Join(dir, "terraform.tfvars.json")}
	for _, pattern := range []string{"*.auto.tfvars", "*.auto.tfvars.json"} {
		m, _ := filepath.Glob(filepath.Join(dir, pattern))
		sort.Strings(m)
		files = append(files, m...)
	}
	// -var and -var-file, as the tool reads them: "-name value" or
	// "-name=value", one or two dashes.
	for i := 0; i < len(rest); i++ {
		a := strings.TrimPrefix(rest[i], "-")
		if a == rest[i] {
			continue
		}
		a = strings.TrimPrefix(a, "-")
		name, v, inline := strings.Cut(a, "=")
		if name != "var" && name != "var-file" {
			continue
		}
		if !inline {
			if i+1 == len(rest) {
				break
			}
			i++
			v = rest[i]
		}
		if name == "var-file" {
			if !filepath.IsAbs(v) {
				v = filepath.Join(dir, v)
			}
			files = append(files, v)
		} else if k, val, ok := strings.Cut(v, "="); ok {
			take(strings.TrimSpace(k), rawValue(val))
		}
	}
	for _, f := range files {
		for name, v := range tfvarsFile(f) {
			take(name, v)
		}
	}
	// A value of several lines is printed one line at a time too.
	for _, v := range values {
		if strings.Contains(v, "\n") {
			for _, l := range strings.Split(v, "\n") {
				if l = strings.TrimSpace(l); l != "" {
					values = append(values, l)
				}
			}
		}
	}
	return values
}

// workDir is the directory the tool runs in: progressotel's own.
func workDir() string {
	d, _ := os.Getwd()
	return d
}

// sensitiveVariables returns the names of the variables that the
// configuration in dir declares sensitive.
func sensitiveVariables(dir string) map[string]bool {
	names := map[string]bool{}
	tf, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
	for _, f := range tf {
		src, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		toks := lexHCL(string(src))
		for i := 0; i+2 < len(toks); i++ {
			if toks[i].kind != tokIdent || toks[i].text != "variable" || toks[i].depth != 0 ||
				toks[i+1].kind != tokString || toks[i+2].kind != tokPunct || toks[i+2].text != "{" {
				continue
			}
			name := toks[i+1].text
			for j := i + 3; j < len(toks) && toks[j].depth > 0; j++ {
				if toks[j].depth == 1 && toks[j].kind == tokIdent && toks[j].text == "sensitive" &&
					j+2 < len(toks) && toks[j+1].text == "=" && toks[j+2].text == "true" {
					names[name] = true
				}
			}
		}
	}
	js, _ := filepath.Glob(filepath.Join(dir, "*.tf.json"))
	for _, f := range js {
		src, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var doc struct {
			Variable map[string]struct {
				Sensitive bool `json:"sensitive"`
			} `json:"variable"`
		}
		if json.Unmarshal(src, &doc) == nil {
			for name, v := range doc.Variable {
				if v.Sensitive {
					names[name] = true
				}
			}
		}
	}
	return names
}

// tfvarsFile returns the strings each variable of a .tfvars (or
// .tfvars.json) file holds.
func tfvarsFile(path string) map[string][]string {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	out := map[string][]string{}
	if strings.HasSuffix(path, ".json") {
		var doc map[string]any
		if json.Unmarshal(src, &doc) == nil {
			for name, v := range doc {
				out[name] = jsonStrings(v, nil)
			}
		}
		return out
	}
	toks := lexHCL(string(src))
	for i := 0; i+2 < len(toks); i++ {
		if toks[i].depth != 0 || toks[i].kind != tokIdent || toks[i+1].kind != tokPunct || toks[i+1].text != "=" {
			continue
		}
		name := toks[i].text
		j := i + 2
		switch toks[j].text {
		case "[", "{":
			if toks[j].kind != tokPunct {
				out[name] = append(out[name], toks[j].text)
				break
			}
			for j++; j < len(toks) && toks[j].depth > 0; j++ {
				if toks[j].kind == tokString {
					out[name] = append(out[name], toks[j].text)
				}
			}
		default:
			out[name] = append(out[name], toks[j].text)
		}
		i = j
	}
	return out
}

// rawValue is what a value given on the command line or in TF_VAR_ holds:
// the text as it is, and for a list or a map in HCL, its strings.
func rawValue(v string) []string {
	t := strings.TrimSpace(v)
	if !strings.HasPrefix(t, "[") && !strings.HasPrefix(t, "{") {
		return []string{v}
	}
	out := []string{v}
	for _, tok := range lexHCL(t) {
		if tok.kind == tokString {
			out = append(out, tok.text)
		}
	}
	return out
}

func jsonStrings(v any, out []string) []string {
	switch v := v.(type) {
	case string:
		out = append(out, v)
	case float64:
		out = append(out, strconv.FormatFloat(v, 'f', -1, 64))
	case []any:
		for _, e := range v {
			out = jsonStrings(e, out)
		}
	case map[string]any:
		for _, e := range v {
			out = jsonStrings(e, out)
		}
	}
	return out
}

// Kinds of HCL token.
const (
	tokIdent  = iota // a name, a number, true, false
	tokString        // a quoted string or a heredoc, unescaped
	tokPunct         // one byte: { } [ ] ( ) = , and the like
)

type hclToken struct {
	kind  int
	text  string
	depth int // of braces and brackets around it
}

// lexHCL splits HCL text into tokens, without comments and blanks.
func lexHCL(s string) []hclToken {
	var toks []hclToken
	depth := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case c == '#' || c == '/' && strings.HasPrefix(s[i:], "//"):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case strings.HasPrefix(s[i:], "/*"):
			if e := strings.Index(s[i+2:], "*/"); e >= 0 {
				i += e + 4
			} else {
				i = len(s)
			}
		case c == '"':
			text, n := hclString(s[i+1:])
			toks = append(toks, hclToken{kind: tokString, text: text, depth: depth})
			i += 1 + n
		case strings.HasPrefix(s[i:], "<<"):
			text, n := heredoc(s[i+2:])
			toks = append(toks, hclToken{kind: tokString, text: text, depth: depth})
			i += 2 + n
		case isHCLIdent(c):
			j := i
			for j < len(s) && (isHCLIdent(s[j]) || s[j] == '.') {
				j++
			}
			toks = append(toks, hclToken{kind: tokIdent, text: s[i:j], depth: depth})
			i = j
		default:
			if c == '}' || c == ']' || c == ')' {
				depth = max(depth-1, 0)
			}
			toks = append(toks, hclToken{kind: tokPunct, text: s[i : i+1], depth: depth})
			if c == '{' || c == '[' || c == '(' {
				depth++
			}
			i++
		}
	}
	return toks
}

func isHCLIdent(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// hclString reads a quoted string's body (after the opening quote) and
// returns its text and the bytes read, the closing quote included.
func hclString(s string) (string, int) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return b.String(), i + 1
		case c == '\n':
			return b.String(), i
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'u', 'U':
				n := 4
				if s[i] == 'U' {
					n = 8
				}
				if i+n < len(s) {
					if r, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32); err == nil {
						b.WriteRune(rune(r))
						i += n
						continue
					}
				}
				b.WriteByte(s[i])
			default:
				b.WriteByte(s[i])
			}
		case (c == '$' || c == '%') && strings.HasPrefix(s[i+1:], string(rune(c))+"{"):
			b.WriteString(s[i : i+2]) // $${ and %%{ are a literal ${ and %{
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), len(s)
}

// heredoc reads a heredoc after "<<" (EOT or -EOT, then its lines to the
// marker) and returns its text and the bytes read.
func heredoc(s string) (string, int) {
	indent := strings.HasPrefix(s, "-")
	head, body, ok := strings.Cut(strings.TrimPrefix(s, "-"), "\n")
	if !ok {
		return "", len(s)
	}
	marker := strings.TrimSpace(head)
	read := len(s) - len(body)
	var lines []string
	for body != "" {
		line, next, _ := strings.Cut(body, "\n")
		read += len(body) - len(next)
		body = next
		if strings.TrimSpace(line) == marker {
			break
		}
		lines = append(lines, line)
	}
	if indent {
		cut := -1
		for _, l := range lines {
			if strings.TrimSpace(l) == "" {
				continue
			}
			if n := len(l) - len(strings.TrimLeft(l, " \t")); cut < 0 || n < cut {
				cut = n
			}
		}
		for i, l := range lines {
			lines[i] = l[min(max(cut, 0), len(l)-len(strings.TrimLeft(l, " \t"))):]
		}
	}
	return strings.Join(lines, "\n") + "\n", read
}
