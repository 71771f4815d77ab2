package terraform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/progressotel/progressotel/internal/base/tooltext"
)

// humanView writes what a user needs of the tool's human output, rebuilt
// from the -json messages RunCommandLine reads (see docs/cli.md, "what the
// wrapper prints"): each diagnostic whole, errors on stderr and warnings on
// stdout as the tool writes them; a "# ADDR will be created" line per
// planned change; the progress lines of the apply; the plan and apply
// summary lines; and the outputs, sensitive ones as <sensitive>. Lines
// that are not messages are written as they are. It takes the lines as
// adapter.Config.RawTee gets them, each then its newline.
type humanView struct {
	stdout, stderr io.Writer
	plain          bool // -no-color: diagnostics without their box, as the tool writes them then

	mu          sync.Mutex
	line        []byte
	changesSeen bool
}

// humanMessage is the part of a -json message humanView reads.
type humanMessage struct {
	Message string `json:"@message"`
	Type    string `json:"type"`
	Changes *struct {
		Add, Change, Import, Remove, Forget int
		Operation                           string
	} `json:"changes"`
	Hook *struct {
		Resource    resourceAddr `json:"resource"`
		Provisioner string       `json:"provisioner"`
		Output      string       `json:"output"`
	} `json:"hook"`
	Change *struct {
		Resource resourceAddr `json:"resource"`
		Action   string       `json:"action"`
		Reason   string       `json:"reason"`
	} `json:"change"`
	Outputs map[string]struct {
		Sensitive bool            `json:"sensitive"`
		Action    string          `json:"action"`
		Value     json.RawMessage `json:"value"`
	} `json:"outputs"`
	Diag *struct {
		Severity string `json:"severity"`
		Summary  string `json:"summary"`
		Detail   string `json:"detail"`
		Address  string `json:"address"`
		Range    *Range `json:"range"`
		Snippet  *struct {
			Context   *string `json:"context"`
			Code      string  `json:"code"`
			StartLine int     `json:"start_line"`
			Values    []struct {
				Traversal string `json:"traversal"`
				Statement string `json:"statement"`
			} `json:"values"`
		} `json:"snippet"`
	} `json:"diagnostic"`
}

func (h *humanView) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.line = append(h.line, p...)
	for {
		i := bytes.IndexByte(h.line, '\n')
		if i < 0 {
			return len(p), nil
		}
		h.show(h.line[:i])
		h.line = h.line[i+1:]
	}
}

// show writes the human text of one line of the tool's output.
func (h *humanView) show(line []byte) {
	var m humanMessage
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	if line[0] != '{' || json.Unmarshal(line, &m) != nil || (m.Type == "" && m.Message == "") {
		h.write(h.stdout, tooltext.Text(string(line), 0)+"\n")
		return
	}
	var b strings.Builder
	switch m.Type {
	case "version":
		return // the tool prints its version only when asked
	case "diagnostic":
		if m.Diag == nil {
			return
		}
		out := h.stdout
		if m.Diag.Severity == "error" {
			out = h.stderr
		}
		h.write(out, h.diagnostic(&m))
		return
	case "planned_change":
		if m.Change == nil || m.Change.Action == "noop" {
			return
		}
		if !h.changesSeen {
			b.WriteString("\nOpenTofu will perform the following actions:\n")
			h.changesSeen = true
		}
		fmt.Fprintf(&b, "\n  # %s %s\n", m.Change.Resource.Addr, changeWords(m.Change.Action, m.Change.Reason))
	case "change_summary":
		if c := m.Changes; c != nil && c.Operation == "plan" && c.Add+c.Change+c.Import+c.Remove+c.Forget == 0 {
			// The tool's words for an empty plan.
			b.WriteString("\nNo changes. Your infrastructure matches the configuration.\n")
			break
		}
		fmt.Fprintf(&b, "\n%s\n", m.Message)
	case "outputs":
		b.WriteString(outputsText(&m))
	case "provision_progress":
		if m.Hook == nil {
			return
		}
		// The tool's words: "ADDR (local-exec): OUTPUT".
		fmt.Fprintf(&b, "%s (%s): %s\n", m.Hook.Resource.Addr, m.Hook.Provisioner, tooltext.Text(m.Hook.Output, 0))
	case "apply_errored", "provision_complete", "provision_errored", "resource_drift":
		return // the tool's human output has no line for these; a diagnostic says what failed
	default:
		b.WriteString(tooltext.Text(m.Message, 0))
		b.WriteString("\n")
	}
	h.write(h.stdout, b.String())
}

func (h *humanView) write(w io.Writer, s string) {
	if w == nil {
		w = h.stdout
	}
	if w != nil && s != "" {
		_, _ = io.WriteString(w, s)
	}
}

// changeWords is how the tool's plan says an action on a resource.
func changeWords(action, reason string) string {
	switch action {
	case "create":
		return "will be created"
	case "read":
		return "will be read during apply"
	case "update":
		return "will be updated in-place"
	case "replace":
		if reason == "tainted" {
			return "is tainted, so must be replaced"
		}
		return "must be replaced"
	case "delete":
		return "will be destroyed"
	case "forget":
		return "will be removed from the OpenTofu state but will not be destroyed"
	case "move":
		return "has moved"
	}
	return "will be changed: " + action
}

// diagnostic is a diagnostic as the tool writes it: in a box of rules, or
// plain with -no-color. The detail is not wrapped to the terminal's width.
func (h *humanView) diagnostic(m *humanMessage) string {
	d := m.Diag
	var lines []string
	lines = append(lines, cases(d.Severity == "error", "Error: ", "Warning: ")+d.Summary, "")
	if d.Address != "" {
		lines = append(lines, "  with "+d.Address+",")
	}
	if d.Range != nil {
		on := fmt.Sprintf("  on %s line %d", d.Range.Filename, d.Range.Start.Line)
		if d.Snippet != nil && d.Snippet.Context != nil {
			on += ", in " + *d.Snippet.Context
		}
		lines = append(lines, on+":")
		if d.Snippet != nil {
			for i, code := range strings.Split(d.Snippet.Code, "\n") {
				lines = append(lines, fmt.Sprintf("%4d: %s", d.Snippet.StartLine+i, code))
			}
			if len(d.Snippet.Values) > 0 {
				lines = append(lines, "    ├────────────────")
				for _, v := range d.Snippet.Values {
					lines = append(lines, "    │ "+v.Traversal+" "+v.Statement)
				}
			}
		}
		lines = append(lines, "")
	}
	if d.Detail == "" {
		for len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
	}
	// The tool wraps the detail to its width, 78 columns when its output
	// is not a terminal, less the box's rule; an indented line is code and
	// stays whole.
	width := 76
	if h.plain {
		width = 78
	}
	for l := range strings.SplitSeq(d.Detail, "\n") {
		if d.Detail == "" {
			break
		}
		if strings.HasPrefix(l, " ") {
			lines = append(lines, l)
			continue
		}
		lines = append(lines, wordWrap(l, width-1)...)
	}
	var b strings.Builder
	if h.plain {
		b.WriteString("\n")
		for _, l := range lines {
			b.WriteString(tooltext.Text(l, 0) + "\n")
		}
		return b.String()
	}
	b.WriteString("╷\n")
	for _, l := range lines {
		b.WriteString("│ " + tooltext.Text(l, 0) + "\n")
	}
	b.WriteString("╵\n")
	return b.String()
}

func cases(c bool, yes, no string) string {
	if c {
		return yes
	}
	return no
}

// outputsText is an outputs message as the tool writes it: after an apply
// the values ("Outputs:", then NAME = VALUE by name, a sensitive one as
// <sensitive>); in a plan the planned changes ("Changes to Outputs:").
func outputsText(m *humanMessage) string {
	if len(m.Outputs) == 0 {
		return ""
	}
	names := make([]string, 0, len(m.Outputs))
	planned := false
	for name, o := range m.Outputs {
		names = append(names, name)
		planned = planned || o.Action != ""
	}
	slices.Sort(names)
	var b strings.Builder
	if planned {
		for _, name := range names {
			o := m.Outputs[name]
			sym := map[string]string{"create": "+", "update": "~", "delete": "-"}[o.Action]
			if sym == "" {
				continue
			}
			if b.Len() == 0 {
				b.WriteString("\nChanges to Outputs:\n")
			}
			fmt.Fprintf(&b, "  %s %s\n", sym, name)
		}
		return b.String()
	}
	b.WriteString("\nOutputs:\n\n")
	for _, name := range names {
		o := m.Outputs[name]
		value := "<sensitive>"
		if !o.Sensitive {
			var v any
			d := json.NewDecoder(bytes.NewReader(o.Value))
			d.UseNumber()
			if d.Decode(&v) != nil {
				v = nil
			}
			value = hclValue(v, "")
		}
		fmt.Fprintf(&b, "%s = %s\n", name, value)
	}
	return b.String()
}

// hclValue writes a JSON value as the tool shows an output: strings
// quoted, lists and objects over lines, two spaces a level, keys quoted
// and sorted.
func hclValue(v any, indent string) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(v)
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	case []any:
		if len(v) == 0 {
			return "[]"
		}
		var b strings.Builder
		b.WriteString("[\n")
		for _, e := range v {
			b.WriteString(indent + "  " + hclValue(e, indent+"  ") + ",\n")
		}
		b.WriteString(indent + "]")
		return b.String()
	case map[string]any:
		if len(v) == 0 {
			return "{}"
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var b strings.Builder
		b.WriteString("{\n")
		for _, k := range keys {
			b.WriteString(indent + "  " + strconv.Quote(k) + " = " + hclValue(v[k], indent+"  ") + "\n")
		}
		b.WriteString(indent + "}")
		return b.String()
	}
	return fmt.Sprint(v)
}

// wordWrap breaks s at spaces into lines of at most limit characters; a
// word longer than that gets a line of its own.
func wordWrap(s string, limit int) []string {
	var lines []string
	var cur strings.Builder
	for _, w := range strings.Split(s, " ") {
		if cur.Len() > 0 && utf8.RuneCountInString(cur.String())+1+utf8.RuneCountInString(w) > limit {
			lines = append(lines, cur.String())
			cur.Reset()
		} else if cur.Len() > 0 {
			cur.WriteString(" ")
		}
		cur.WriteString(w)
	}
	return append(lines, cur.String())
}
