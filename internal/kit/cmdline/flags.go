package cmdline

import (
	"path/filepath"
	"slices"
	"strings"
)

// HasFlag reports whether args hold the flag name, as -name, --name,
// -name=value or --name=value.
func HasFlag(args []string, name string) bool {
	for _, a := range args {
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// SplitSubcommand splits args into the global options before the
// subcommand (-chdir=DIR), the subcommand, and its own arguments; ok is
// false when every argument starts with "-" (then global is args).
func SplitSubcommand(args []string) (global []string, sub string, rest []string, ok bool) {
	i := slices.IndexFunc(args, func(a string) bool { return !strings.HasPrefix(a, "-") })
	if i < 0 {
		return args, "", nil, false
	}
	return args[:i], args[i], args[i+1:], true
}

// Tool is the name of the tool that arg0 (a command line's first word, a
// name or a path) runs: its base name, without a Windows ".exe".
func Tool(arg0 string) string {
	return strings.TrimSuffix(filepath.Base(arg0), ".exe")
}

// ShellQuote quotes args for a POSIX shell, or Python's shlex (as
// ansible-runner splits --cmdline and its args file): each in single
// quotes, a single quote inside closing them, escaped, reopening them.
func ShellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
