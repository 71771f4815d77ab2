package cmdline

import (
	"slices"
	"strings"
)

// TofuReporting are the subcommands of tofu and terraform whose -json
// output reports progress.
var TofuReporting = []string{"init", "plan", "apply", "destroy", "refresh"}

// AnsibleReports reports whether ansible.RunCommandLine reports argv: an
// ansible-playbook run (not its help or version), or ansible-runner run.
// argv[0] is the command as given, a name or a path.
func AnsibleReports(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	switch Tool(argv[0]) {
	case "ansible-playbook":
		// Help and version print and exit: nothing to report.
		return !slices.ContainsFunc(argv[1:], func(a string) bool { return a == "-h" || a == "--help" || a == "--version" })
	case "ansible-runner":
		i := slices.IndexFunc(argv[1:], func(a string) bool { return !strings.HasPrefix(a, "-") })
		return i >= 0 && argv[1+i] == "run"
	}
	return false
}

// TofuReports reports whether terraform.RunCommandLine reports argv: tofu
// or terraform (a name or a path) with a subcommand of TofuReporting.
func TofuReports(argv []string) bool {
	if len(argv) == 0 || !slices.Contains([]string{"tofu", "terraform"}, Tool(argv[0])) {
		return false
	}
	_, sub, _, _ := SplitSubcommand(argv[1:])
	return slices.Contains(TofuReporting, sub)
}
