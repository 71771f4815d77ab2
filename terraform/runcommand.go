package terraform

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/progressotel/progressotel/adapter"
	"github.com/progressotel/progressotel/internal/kit/cmdline"
)

// ErrPrompts is returned by RunCommandLine, before anything runs or is
// recorded, for an apply or destroy that would ask for approval (no
// -auto-approve, no saved plan): with -json the tool cannot ask.
var ErrPrompts = errors.New("terraform: the command asks for approval, which -json cannot (add -auto-approve)")

// WithDisplay writes to w what a user needs of what the tool would have
// printed, rebuilt from its messages: the planned change per resource, the
// apply's progress, the summary lines, the outputs (sensitive ones as
// <sensitive>) and every warning whole; errors go whole to the command
// line's Stderr, as the tool writes them. Lines that are not messages are
// written as they are, cleaned of terminal escapes, and the lines of the
// tool's own -json when the command line asks for it. RunCommandLine only.
func WithDisplay(w io.Writer) Option {
	return adapter.Own(func(c *config) { c.Display = w })
}

// RunCommandLine runs a tofu or terraform command line as a user typed it
// (`progressotel run -- tofu apply ...`), with only -json added after the
// subcommand, and records it live as Run does. c.Argv[0] is the tool, a
// name or a path. Signals from c.Signals go to the tool as if sent to it
// directly: SIGINT, a terminal's Ctrl-C, to its process group, any other
// to the tool alone; cancelling ctx stops it as Run does.
//
// Exit is how the tool ended, -1 when it did not start. The error is
// ErrPrompts (nothing run), or as Run's.
func RunCommandLine(ctx context.Context, c adapter.Command, opts ...Option) (Result, adapter.Exit, error) {
	if len(c.Argv) == 0 {
		return Result{}, noExit, errors.New("terraform: RunCommandLine: no command line")
	}
	global, sub, rest, ok := cmdline.SplitSubcommand(c.Argv[1:])
	if ok && prompts(sub, rest) {
		return Result{}, noExit, ErrPrompts
	}
	cfg := newConfig(opts)
	tool := cmdline.Tool(c.Argv[0])
	argv := append(append([]string{c.Argv[0]}, global...), sub)
	if cmdline.HasFlag(rest, "json") {
		cfg.RawTee, cfg.Display = cfg.Display, nil // the user asked for the JSON itself
	} else {
		argv = append(argv, "-json")
		if cfg.Display != nil {
			// The human output, rebuilt from the messages (human.go).
			cfg.RawTee = &humanView{stdout: cfg.Display, stderr: c.Stderr, plain: cmdline.HasFlag(rest, "no-color")}
			cfg.Display = nil
		}
	}
	c.Argv = append(argv, rest...)
	if c.Env == nil {
		c.Env = os.Environ()
	}

	d := newRunDecoder(ctx, cfg, tool, sub)
	if !ok {
		res, err := d.finish(outcome{end: time.Now(), exit: noExit, cause: errors.New("terraform: no subcommand (such as \"apply\")")})
		return res, noExit, err
	}
	c.Env = d.toolTraceEnv(c.Env, tool) // the tool's own spans in the run's trace (tooltrace.go)
	o := d.runProcess(ctx, c, "")
	res, err := d.finish(o.of(rest))
	return res, o.exit, err
}

// prompts reports whether a subcommand would ask for approval: an apply or
// a destroy without -auto-approve, other than an apply of a saved plan.
func prompts(sub string, rest []string) bool {
	savedPlan := slices.ContainsFunc(rest, func(a string) bool { return !strings.HasPrefix(a, "-") })
	return !cmdline.HasFlag(rest, "auto-approve") && (sub == "destroy" || sub == "apply" && !savedPlan)
}
