package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

var completionCommand = &command{
	name:     "completion",
	synopsis: "print a shell completion script: bash, zsh or fish",
	usage:    "progressotel completion bash|zsh|fish",
	description: `Prints a completion script for commands, flags and flag values.

  bash:  source <(progressotel completion bash)       # or save it in
         /etc/bash_completion.d/progressotel
  zsh:   source <(progressotel completion zsh)
  fish:  progressotel completion fish > ~/.config/fish/completions/progressotel.fish`,
	flags: func() *flag.FlagSet { return flag.NewFlagSet("completion", flag.ContinueOnError) },
}

func runCompletion(_ context.Context, args []string, s stdio) Status {
	fs := completionCommand.flags()
	if st, done := parseCommand(completionCommand, fs, args, s); done {
		return st
	}
	switch fs.Arg(0) {
	case "bash":
		writeBash(s.stdout)
	case "zsh":
		fmt.Fprint(s.stdout, "#compdef progressotel\nautoload -U +X bashcompinit && bashcompinit\n")
		writeBash(s.stdout)
	case "fish":
		writeFish(s.stdout)
	default:
		return usageError(completionCommand, s.stderr, invalidf("which shell? bash, zsh or fish"))
	}
	return Status{}
}

// takesValue reports whether f is not a boolean flag.
func takesValue(f *flag.Flag) bool {
	bf, isBool := f.Value.(interface{ IsBoolFlag() bool })
	return !(isBool && bf.IsBoolFlag())
}

func commandNames() []string {
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	return append(names, "help")
}

func writeBash(w io.Writer) {
	fmt.Fprintf(w, `# bash completion for progressotel (progressotel completion bash)
_progressotel() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local cmd=${COMP_WORDS[1]} i
    if (( COMP_CWORD == 1 )); then
        COMPREPLY=($(compgen -W "%s" -- "$cur"))
        return
    fi
    if [[ $cmd == run ]]; then
        for (( i = 2; i < COMP_CWORD; i++ )); do
            if [[ ${COMP_WORDS[i]} == -- ]]; then
                if (( i == COMP_CWORD - 1 )); then
                    COMPREPLY=($(compgen -c -- "$cur"))
                fi
                return # the command's own arguments: default completion
            fi
        done
    fi
    case $cmd in
`, strings.Join(commandNames(), " "))
	for _, c := range commands {
		if c == completionCommand {
			fmt.Fprintf(w, "    completion) COMPREPLY=($(compgen -W \"bash zsh fish\" -- \"$cur\")) ;;\n")
			continue
		}
		if c == versionCommand {
			continue
		}
		fmt.Fprintf(w, "    %s)\n        case $prev in\n", c.name)
		var plain, names []string
		c.flags().VisitAll(func(f *flag.Flag) {
			names = append(names, "--"+f.Name)
			switch choices := c.choices[f.Name]; {
			case len(choices) > 0:
				fmt.Fprintf(w, "            --%s) COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return ;;\n", f.Name, strings.Join(choices, " "))
			case takesValue(f):
				plain = append(plain, "--"+f.Name)
			}
		})
		if len(plain) > 0 {
			// Files for @file and --output; the rest takes free text.
			fmt.Fprintf(w, "            %s) return ;;\n", strings.Join(plain, "|"))
		}
		names = append(names, "--help")
		if c == runCommand {
			names = append(names, "--")
		}
		fmt.Fprintf(w, "        esac\n        COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")) ;;\n", strings.Join(names, " "))
	}
	fmt.Fprint(w, `    esac
}
complete -o default -F _progressotel progressotel
`)
}

func writeFish(w io.Writer) {
	fmt.Fprintln(w, "# fish completion for progressotel (progressotel completion fish)")
	fmt.Fprintln(w, "complete -c progressotel -f")
	for _, c := range commands {
		fmt.Fprintf(w, "complete -c progressotel -n __fish_use_subcommand -a %s -d %s\n", c.name, fishQuote(c.synopsis))
	}
	for _, c := range commands {
		if c == completionCommand {
			fmt.Fprintln(w, "complete -c progressotel -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'")
			continue
		}
		c.flags().VisitAll(func(f *flag.Flag) {
			line := fmt.Sprintf("complete -c progressotel -n '__fish_seen_subcommand_from %s' -l %s", c.name, f.Name)
			if takesValue(f) {
				line += " -r"
			}
			if choices := c.choices[f.Name]; len(choices) > 0 {
				line += " -a " + fishQuote(strings.Join(choices, " "))
			} else if slices.Contains([]string{"output", "details"}, f.Name) {
				line += " -F"
			}
			_, usage := flag.UnquoteUsage(f)
			fmt.Fprintln(w, line+" -d "+fishQuote(firstSentence(usage)))
		})
	}
}

func fishQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }

func firstSentence(s string) string {
	if i := strings.IndexAny(s, ":;("); i > 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
