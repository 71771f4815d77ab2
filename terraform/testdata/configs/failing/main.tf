# An apply that fails: a provisioner exits non-zero, another fails with a
# sensitive value in its command (the tool quotes the command and its output
# in the diagnostic), and a third prints a token and a private key.

variable "api_secret" {
  type      = string
  sensitive = true
  default   = "s3cr3t-from-config-default"
}

resource "terraform_data" "ok" {
  input = "fine"
}

resource "terraform_data" "broken" {
  depends_on = [terraform_data.ok]

  provisioner "local-exec" {
    command = "echo about to fail; echo disk full >&2; exit 3"
  }
}

resource "terraform_data" "leaky" {
  provisioner "local-exec" {
    command = "echo connecting with ${var.api_secret}; exit 4"
  }
}

resource "terraform_data" "printer" {
  provisioner "local-exec" {
    command = "printf 'export API_TOKEN=tok-abc123xyz\\n-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\nBKcwggSjAgEAAoIBAQC7\\n-----END PRIVATE KEY-----\\nprinted\\n'"
  }
}
