package cli

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSensitiveTofuValues: the values of the sensitive variables from
// each source, in the forms HCL and JSON write them; nothing for a
// variable that is not sensitive.
func TestSensitiveTofuValues(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"vars.tf": `# a comment with variable "x" { sensitive = true }
variable "db_password" {
  type      = string
  sensitive = true # the database's
}
/* variable "commented" { sensitive = true } */
variable "tokens" {
  type      = list(string)
  sensitive = true
}
variable "cert" {
  sensitive = true
}
variable "region" {
  default = "eu-west-1"
  validation {
    condition     = var.region != ""
    error_message = "sensitive = true"
  }
}
`,
		"more.tf.json":       `{"variable": {"api_key": {"type": "string", "sensitive": true}, "zone": {"default": "a"}}}`,
		"terraform.tfvars":   "region = \"us-east-1\"\ndb_password = \"p\\\"w-\\u00e9-tfvars\"\n",
		"x.auto.tfvars":      "tokens = [\"tok-auto-1\", \"tok-auto-2\"]\n",
		"y.auto.tfvars.json": `{"api_key": "key-auto-json", "zone": "b"}`,
		"sub/extra.tfvars":   "cert = <<-EOT\n    line-one-cert\n    line-two-cert\n  EOT\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	argv := []string{"tofu", "-chdir=" + filepath.Base(dir), "apply", "-auto-approve", "--var", `tokens=["tok-cli"]`,
		"-var=db_password=pw-cli", "-var", "region=eu-central-1", "-var-file", "sub/extra.tfvars"}
	env := []string{"TF_VAR_api_key=key-env", "TF_VAR_region=r-env", "HOME=/root"}
	got := sensitiveTofuValues(argv, env, filepath.Dir(dir))
	for _, want := range []string{"p\"w-é-tfvars", "tok-auto-1", "tok-auto-2", "key-auto-json", "line-one-cert\nline-two-cert\n",
		"line-one-cert", "line-two-cert", `["tok-cli"]`, "tok-cli", "pw-cli", "key-env"} {
		if !slices.Contains(got, want) {
			t.Errorf("no %q in %q", want, got)
		}
	}
	for _, not := range []string{"us-east-1", "eu-central-1", "r-env", "b", "eu-west-1"} {
		if slices.Contains(got, not) {
			t.Errorf("%q is not sensitive: %q", not, got)
		}
	}
	if got := sensitiveTofuValues([]string{"tofu", "apply"}, env, t.TempDir()); got != nil {
		t.Errorf("no configuration, no values: %q", got)
	}
}
