package terraform

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/progressotel/progressotel/internal/kit/cmdline"
)

// Command is a run of the tofu or terraform CLI.
type Command struct {
	// Binary is the executable, a path or a name on PATH; empty: "tofu",
	// else "terraform".
	Binary string
	// Dir is the working directory, the root module; empty: the current one.
	Dir string
	// Args are the subcommand and its flags, after any global options:
	// {"apply"}, {"-chdir=DIR", "plan", "-out=tfplan"}, {"apply", "tfplan"}.
	// Run adds "-json", "-input=false" and, for apply and destroy,
	// "-auto-approve" unless given. The subcommands that report progress
	// are init, plan, apply, destroy and refresh.
	Args []string
	// Init runs "init -input=false -json" first, in a child span, and
	// stops there if it fails.
	Init bool
	// Vars are input variables, JSON-encodable, written to a private
	// variables file (-var-file), never to the command line.
	Vars map[string]any
	// SensitiveVars are input variables like Vars, whose values the
	// adapter also keeps out of every output (see WithSensitiveValues);
	// declare them sensitive in the configuration too, for the tool's sake.
	SensitiveVars map[string]any
	// Env holds "KEY=value" entries added to the tool's environment (the
	// driver's own plus TF_IN_AUTOMATION=1); later entries win.
	Env []string
}

// varFileName is the private variables file's name: .tfvars.json is read as JSON.
const varFileName = "progressotel.tfvars.json"

// split returns the global options, the subcommand and its arguments.
func (c Command) split() (global []string, sub string, rest []string, err error) {
	global, sub, rest, ok := cmdline.SplitSubcommand(c.Args)
	if !ok {
		return nil, "", nil, errors.New("terraform: Command.Args has no subcommand (such as \"apply\")")
	}
	return global, sub, rest, nil
}

// args returns the command line of the subcommand run, with the flags Run
// adds; varFile is the variables file, or empty.
func args(global []string, sub string, rest []string, varFile string) []string {
	out := append(slices.Clone(global), sub)
	if !cmdline.HasFlag(rest, "json") {
		out = append(out, "-json")
	}
	takesInput := sub == "import" || slices.Contains(cmdline.TofuReporting, sub) // and so -var-file, but for init
	if takesInput && !cmdline.HasFlag(rest, "input") {
		out = append(out, "-input=false")
	}
	if (sub == "apply" || sub == "destroy") && !cmdline.HasFlag(rest, "auto-approve") {
		out = append(out, "-auto-approve")
	}
	if varFile != "" && takesInput && sub != "init" {
		out = append(out, "-var-file="+varFile)
	}
	return append(out, rest...)
}

// binary resolves the executable.
func (c Command) binary() (string, error) {
	if c.Binary != "" {
		p, err := exec.LookPath(c.Binary)
		if err != nil {
			return "", fmt.Errorf("terraform: %w", err)
		}
		// exec would resolve a relative path against Command.Dir.
		return filepath.Abs(p)
	}
	for _, name := range []string{"tofu", "terraform"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNotInstalled
}

// writeVarFile writes Vars and SensitiveVars (which win) to a file of dir,
// readable by the owner only.
func (c Command) writeVarFile(dir string) (string, error) {
	all := make(map[string]any, len(c.Vars)+len(c.SensitiveVars))
	maps.Copy(all, c.Vars)
	maps.Copy(all, c.SensitiveVars)
	b, err := json.Marshal(all)
	if err != nil {
		return "", fmt.Errorf("terraform: encoding the variables: %w", err)
	}
	path := filepath.Join(dir, varFileName)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return "", fmt.Errorf("terraform: writing the variables file: %w", err)
	}
	return path, nil
}

// sensitiveStrings lists the string forms of the scalar values in v.
func sensitiveStrings(v any, out []string) []string {
	switch x := v.(type) {
	case nil, bool:
	case string:
		out = append(out, x)
	case map[string]any:
		for _, e := range x {
			out = sensitiveStrings(e, out)
		}
	case []any:
		for _, e := range x {
			out = sensitiveStrings(e, out)
		}
	case []string:
		out = append(out, x...)
	case map[string]string:
		out = slices.AppendSeq(out, maps.Values(x))
	case int:
		out = append(out, strconv.Itoa(x))
	case int64:
		out = append(out, strconv.FormatInt(x, 10))
	case float64:
		out = append(out, strconv.FormatFloat(x, 'g', -1, 64))
	default: // any other type: the strings of its JSON form
		var generic any
		if b, err := json.Marshal(x); err == nil && json.Unmarshal(b, &generic) == nil {
			return sensitiveStrings(generic, out)
		}
	}
	return out
}
