package cli

import (
	"strings"
	"testing"
)

// Which adapter runs which command line.
func TestChooseAdapter(t *testing.T) {
	for _, tc := range []struct {
		argv, adapter string
	}{
		{"tofu apply -auto-approve", "terraform"},
		{"/usr/local/bin/terraform -chdir=infra plan -out=tfplan", "terraform"},
		{"tofu init", "terraform"},
		{"tofu destroy", "terraform"}, // prompts: the adapter runs it plainly, with a warning
		{"tofu output -json", "command"},
		{"tofu version", "command"},
		{"tofu", "command"},
		{"ansible-playbook -i inventory site.yml", "ansible"},
		{"/usr/bin/ansible-playbook site.yml --check", "ansible"},
		{"ansible-playbook --version", "command"},
		{"ansible-playbook -h", "command"},
		{"ansible-runner run /srv/pdd -p site.yml", "ansible"},
		{"ansible-runner --debug run /srv/pdd -p site.yml", "ansible"},
		{"ansible-runner stop /srv/pdd", "command"},
		{"ansible all -m ping", "command"},
		{"sh -c true", "command"},
	} {
		a, err := chooseAdapter("auto", strings.Fields(tc.argv))
		if err != nil || a.Name() != tc.adapter {
			t.Errorf("%s: %v %v, want %s", tc.argv, a, err, tc.adapter)
		}
	}
	if a, _ := chooseAdapter("none", []string{"tofu", "apply"}); a.Name() != commandAdapterName {
		t.Errorf("--adapter none: %s", a.Name())
	}
	if a, _ := chooseAdapter("terraform", []string{"my-tofu-wrapper", "apply"}); a.Name() != "terraform" {
		t.Errorf("--adapter terraform: %s", a.Name())
	}
}
