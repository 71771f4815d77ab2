package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/progressotel/progressotel/internal/base/tooltext"
	"github.com/progressotel/progressotel/internal/kit/cmdline"
	"github.com/progressotel/progressotel/terraform"
)

// terraformAdapter reports OpenTofu and Terraform runs with package
// terraform: it adds -json to the command line and feeds the tool's
// machine-readable UI to terraform.Stream, which records each message
// live, in a span per resource operation under the run's span.
//
// It changes nothing else about what the tool does: it adds neither
// -auto-approve nor -input=false. An apply or destroy that would prompt for
// approval (no -auto-approve, no saved plan) cannot run with -json, so it
// runs as a plain command, with a warning.
type terraformAdapter struct{}

// terraformSubcommands report progress in their -json output.
var terraformSubcommands = []string{"init", "plan", "apply", "destroy", "refresh"}

func (terraformAdapter) Name() string { return "terraform" }

func (terraformAdapter) Match(argv []string) bool {
	if !slices.Contains([]string{"tofu", "terraform"}, toolName(argv[0])) {
		return false
	}
	_, sub, _, _ := cmdline.SplitSubcommand(argv[1:])
	return slices.Contains(terraformSubcommands, sub)
}

// toolName is the base name of a command, without a Windows .exe.
func toolName(arg0 string) string {
	return strings.TrimSuffix(filepath.Base(arg0), ".exe")
}

// prompts reports whether the tool would ask for approval: an apply or a
// destroy without -auto-approve, other than an apply of a saved plan.
func prompts(sub string, rest []string) bool {
	if cmdline.HasFlag(rest, "auto-approve") {
		return false
	}
	switch sub {
	case "destroy":
		return true
	case "apply":
		return !slices.ContainsFunc(rest, func(a string) bool { return !strings.HasPrefix(a, "-") })
	}
	return false
}

func (a terraformAdapter) Run(ctx context.Context, inv *Invocation) Status {
	global, sub, rest, _ := cmdline.SplitSubcommand(inv.Argv[1:])
	if prompts(sub, rest) {
		inv.Logger.Warn(toolName(inv.Argv[0]) + " " + sub + " asks for approval, which -json cannot: its events are not reported (add -auto-approve)")
		return commandAdapter{}.Run(ctx, inv)
	}
	userJSON := cmdline.HasFlag(rest, "json")
	argv := append([]string{inv.Argv[0]}, global...)
	argv = append(argv, sub)
	if !userJSON {
		argv = append(argv, "-json")
	}
	argv = append(argv, rest...)

	operation := inv.Operation
	if operation == "" {
		operation = sub
	}
	tool := toolName(argv[0])
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = inv.Env
	cmd.Stdin, cmd.Stderr = inv.Stdin, inv.Stderr
	pump := &terraformPump{out: inv.Stdout, raw: userJSON}
	opts := []terraform.Option{
		terraform.WithRecorder(inv.Recorder), terraform.WithTracerProvider(inv.TracerProvider),
		terraform.WithEnvelope(inv.Envelope), terraform.WithOperation(operation), terraform.WithLogger(inv.Logger),
	}
	run := &streamedRun{
		inv: inv, cmd: cmd, tap: pump.show, maxLine: terraform.DefaultMaxLineBytes,
		decode: func(ctx context.Context, r io.Reader) {
			_, _ = terraform.Stream(ctx, r, opts...) // it records the outcome; the status is the tool's
		},
		// When the tool ended badly without an error in its messages
		// (killed by a signal), the stream is cut short with that
		// cause, so that terraform.Stream reports OperationFailed.
		ended: func(st Status, cancel context.CancelCauseFunc) {
			if !st.OK() && !(st.Code == 2 && cmdline.HasFlag(rest, "detailed-exitcode")) && !pump.errorSeen {
				cancel(errors.New(tool + " " + st.String()))
			}
		},
	}
	st, err := run.run(ctx)
	if err != nil {
		inv.Logger.Warn("cannot run the command", "command", tool, "error", err.Error())
	}
	return st
}

// terraformPump shows each message of the tool's -json output on stdout
// as its text (or the JSON itself when the user asked for -json), and
// notes whether the tool reported an error.
type terraformPump struct {
	out       io.Writer
	raw       bool
	errorSeen bool
}

// show writes the line for the user, and notes errors.
func (p *terraformPump) show(line []byte) {
	if p.raw {
		_, _ = p.out.Write(line)
	}
	var m struct {
		Message    string `json:"@message"`
		Type       string `json:"type"`
		Diagnostic struct {
			Severity string `json:"severity"`
		} `json:"diagnostic"`
	}
	if json.Unmarshal(line, &m) != nil {
		if !p.raw {
			_, _ = p.out.Write(line) // plain text the tool wrote: as it is
		}
		return
	}
	if m.Type == "apply_errored" || m.Type == "provision_errored" || (m.Type == "diagnostic" && m.Diagnostic.Severity == terraform.SeverityError) {
		p.errorSeen = true
	}
	if !p.raw && m.Message != "" {
		_, _ = io.WriteString(p.out, tooltext.Line(m.Message)+"\n")
	}
}
