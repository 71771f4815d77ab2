package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run -- tofu apply with variables the configuration declares sensitive,
// a value from each of the five sources (TF_VAR_*, -var, -var-file,
// *.auto.tfvars, terraform.tfvars), which a local-exec prints: none of
// the values is in any event of the run, while a variable that is not
// sensitive, printed the same way, is.
func TestRunTofuSensitiveVariables(t *testing.T) {
	env := tofuEnv(t, tofuDir(t))
	secrets := map[string]string{
		"from_env":    "sens-env-7a61c2",
		"from_cli":    "sens-cli-55d0e9",
		"from_file":   "sens-varfile-b13f",
		"from_auto":   "sens-auto-0c4d2e",
		"from_tfvars": "sens-tfvars-9e8a",
	}
	var tf, echo strings.Builder
	tf.WriteString(`variable "plain" {
  type    = string
  default = "plain-visible-31f4"
}
`)
	echo.WriteString(`echo "plain is ${var.plain}"`)
	for name := range secrets {
		tf.WriteString("variable \"" + name + "\" {\n  type      = string\n  sensitive = true\n}\n")
		echo.WriteString(`; echo "` + name + ` is ${nonsensitive(var.` + name + `)}"`)
	}
	tf.WriteString(`resource "terraform_data" "print" {
  provisioner "local-exec" {
    command = <<-EOT
      ` + echo.String() + `
    EOT
  }
}
`)
	dir := t.TempDir()
	files := map[string]string{
		"main.tf":          tf.String(),
		"terraform.tfvars": "# the defaults\nfrom_tfvars = \"" + secrets["from_tfvars"] + "\"\n",
		"db.auto.tfvars":   "from_auto = \"" + secrets["from_auto"] + "\" // local\n",
		"extra.tfvars":     "from_file = <<EOT\n" + secrets["from_file"] + "\nEOT\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env = append(env, "TF_VAR_from_env="+secrets["from_env"])
	r := runPO(t, env, "run", "--", "tofu", "-chdir="+dir, "apply", "-auto-approve",
		"-var", "from_cli="+secrets["from_cli"], "-var-file=extra.tfvars")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	raw, err := os.ReadFile(r.out)
	if err != nil {
		t.Fatal(err)
	}
	// The control: the provisioner's output is in the events.
	if !strings.Contains(string(raw), "plain is plain-visible-31f4") {
		t.Fatalf("the provisioner's output is not in the events, so the test would see no leak:\n%s", raw)
	}
	for name, v := range secrets {
		if strings.Contains(string(raw), v) {
			t.Errorf("the value of %s reached the events:\n%s", name, grep(string(raw), v))
		}
		if !strings.Contains(string(raw), name+" is [REDACTED]") {
			t.Errorf("no %q in the events: the provisioner did not print it", name+" is [REDACTED]")
		}
	}
}

// grep returns the lines of text that hold s.
func grep(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
