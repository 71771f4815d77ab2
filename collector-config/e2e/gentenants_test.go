package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// tenants.example.yaml is exactly what gen-tenants.sh makes, and the
// generator refuses ids that could break a component name, an OTTL string
// or a topic name.
func TestGenTenants(t *testing.T) {
	gen := filepath.Join(configDir, "gen-tenants.sh")
	out, err := exec.Command(gen, "tenant-a", "tenant-b").Output()
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile(filepath.Join(configDir, "tenants.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != string(example) {
		t.Errorf("tenants.example.yaml is stale: regenerate with ./gen-tenants.sh tenant-a tenant-b > tenants.example.yaml")
	}
	for _, bad := range [][]string{{}, {`a"b`}, {"a b"}, {"-a"}, {"a/b"}, {"ok", "ok"}, {"x\ny"}, {string(make([]byte, 65))}} {
		if err := exec.Command(gen, bad...).Run(); err == nil {
			t.Errorf("gen-tenants.sh %q succeeded, want refusal", bad)
		}
	}
}
