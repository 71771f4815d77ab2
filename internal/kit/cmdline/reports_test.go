package cmdline

import (
	"strings"
	"testing"
)

// Which command lines the adapters' RunCommandLine reports.
func TestReports(t *testing.T) {
	for argv, want := range map[string]bool{
		"ansible-playbook -i inventory site.yml":          true,
		"/usr/bin/ansible-playbook site.yml --check":      true,
		"ansible-playbook --version":                      false,
		"ansible-playbook -h":                             false,
		"ansible-runner run /srv/pdd -p site.yml":         true,
		"ansible-runner --debug run /srv/pdd -p site.yml": true,
		"ansible-runner stop /srv/pdd":                    false,
		"ansible all -m ping":                             false,
		"":                                                false,
	} {
		if got := AnsibleReports(strings.Fields(argv)); got != want {
			t.Errorf("AnsibleReports(%s) = %v, want %v", argv, got, want)
		}
	}
	for argv, want := range map[string]bool{
		"tofu apply -auto-approve":         true,
		"/usr/bin/terraform -chdir=x plan": true,
		"tofu -chdir=x init":               true,
		"tofu fmt":                         false,
		"tofu version":                     false,
		"tofu":                             false,
		"ansible-playbook site.yml":        false,
	} {
		if got := TofuReports(strings.Fields(argv)); got != want {
			t.Errorf("TofuReports(%s) = %v, want %v", argv, got, want)
		}
	}
}
