package cmdline

import "strings"

// ShellQuote quotes args for a POSIX shell, or for what splits a command
// line like one (Python's shlex, which ansible-runner uses for --cmdline
// and its args file): each argument in single quotes, a single quote
// inside it closing the quotes, escaped, and opening them again.
func ShellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
