package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// --help lists every flag of each command, and every variable the
// commands read or set; the docs do too: docs/cli.md for the flags and the
// command's own variables, docs/configuration.md (their one home) for the
// OTEL_* variables the command shares with the library.
func TestHelpAndDocsListEveryFlagAndVariable(t *testing.T) {
	var docs [2][]byte
	for i, name := range []string{"cli.md", "configuration.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		docs[i] = b
	}
	doc := docs[0]
	for _, c := range commands {
		var out bytes.Buffer
		st := Main(context.Background(), []string{c.name, "--help"}, nil, &out, &out)
		if st.Code != 0 {
			t.Fatalf("%s --help: %v", c.name, st)
		}
		c.flags().VisitAll(func(f *flag.Flag) {
			if !strings.Contains(out.String(), "--"+f.Name+" ") && !strings.Contains(out.String(), "--"+f.Name+"\n") {
				t.Errorf("%s --help does not list --%s", c.name, f.Name)
			}
			if !strings.Contains(string(doc), "`--"+f.Name) {
				t.Errorf("docs/cli.md does not list --%s (%s)", f.Name, c.name)
			}
		})
		for _, e := range c.env {
			if !strings.Contains(out.String(), e.name) {
				t.Errorf("%s --help does not list %s", c.name, e.name)
			}
			if !strings.HasPrefix(e.name, "(") && !bytes.Contains(docs[0], []byte(e.name)) && !bytes.Contains(docs[1], []byte(e.name)) {
				t.Errorf("neither docs/cli.md nor docs/configuration.md lists %s", e.name)
			}
		}
	}
	for _, must := range []string{"OTEL_LOGS_EXPORTER", "TRACEPARENT", "X_TRACECTX_", "PROGRESSOTEL_SOCKET", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		var out bytes.Buffer
		Main(context.Background(), []string{"help", "emit"}, nil, &out, &out)
		if !strings.Contains(out.String(), must) {
			t.Errorf("emit's help does not name %s", must)
		}
	}
}

// The bash completion script works in a real bash: commands, flags,
// flag values, and the command after run's "--".
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	var script bytes.Buffer
	if st := Main(context.Background(), []string{"completion", "bash"}, nil, &script, &script); st.Code != 0 {
		t.Fatalf("completion bash: %v: %s", st, script.String())
	}
	path := filepath.Join(t.TempDir(), "progressotel.bash")
	if err := os.WriteFile(path, script.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	complete := func(words ...string) []string {
		t.Helper()
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + w + "'"
		}
		cmd := exec.Command(bash, "--norc", "-c", `source "$1"; COMP_WORDS=(`+strings.Join(quoted, " ")+`); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _progressotel; printf '%s\n' "${COMPREPLY[@]}"`, "bash", path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v: %s", err, out)
		}
		return strings.Fields(string(out))
	}
	for _, tc := range []struct {
		words []string
		want  []string
	}{
		{[]string{"progressotel", "tr"}, []string{"transition"}},
		{[]string{"progressotel", "emit", "--sev"}, []string{"--severity"}},
		{[]string{"progressotel", "emit", "--severity", "w"}, []string{"warn"}},
		{[]string{"progressotel", "transition", "--stream", ""}, []string{"provisioning", "lifecycle"}},
		{[]string{"progressotel", "run", "--oper"}, []string{"operation"}},
		{[]string{"progressotel", "completion", "z"}, []string{"zsh"}},
		{[]string{"progressotel", "run", "--", "bas"}, []string{"bash"}},
	} {
		got := complete(tc.words...)
		for _, w := range tc.want {
			found := false
			for _, g := range got {
				if strings.TrimPrefix(g, "--") == strings.TrimPrefix(w, "--") {
					found = true
				}
			}
			if !found {
				t.Errorf("completing %v: %v, want %s among them", tc.words, got, w)
			}
		}
	}
	// A flag that takes free text completes to nothing of ours.
	if got := complete("progressotel", "emit", "--type", ""); len(got) != 0 {
		t.Errorf("completing --type: %v", got)
	}
}

func TestZshAndFishCompletionScripts(t *testing.T) {
	for _, shell := range []string{"zsh", "fish"} {
		var out bytes.Buffer
		if st := Main(context.Background(), []string{"completion", shell}, nil, &out, &out); st.Code != 0 {
			t.Fatalf("completion %s: %v", shell, st)
		}
		if !strings.Contains(out.String(), "severity") || !strings.Contains(out.String(), "transition") {
			t.Errorf("%s script lacks flags or commands:\n%s", shell, out.String())
		}
	}
	var out bytes.Buffer
	if st := Main(context.Background(), []string{"completion", "tcsh"}, nil, &out, &out); st.Code != ExitUsage {
		t.Errorf("completion tcsh: %v", st)
	}
}
