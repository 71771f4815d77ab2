# A small system built from terraform_data resources: no provider download,
# no network. The terraform package's tests apply, replace, plan and destroy
# it with the real tool; make demo-terraform shows it.

variable "generation" {
  description = "Changing it replaces the web servers (triggers_replace)."
  type        = string
  default     = "1"
}

variable "db_password" {
  type      = string
  sensitive = true
}

resource "terraform_data" "network" {
  input = "10.0.0.0/16"

  provisioner "local-exec" {
    command = "echo creating network 10.0.0.0/16; echo network ready"
  }
}

resource "terraform_data" "web" {
  count            = 3
  input            = "web-${count.index}"
  triggers_replace = [var.generation]
  depends_on       = [terraform_data.network]

  provisioner "local-exec" {
    command = "echo web-${count.index} booting; echo web-${count.index} up"
  }
}

resource "terraform_data" "database" {
  input = var.db_password
}

resource "terraform_data" "app" {
  input = [for w in terraform_data.web : w.id]

  provisioner "local-exec" {
    command = "echo app deployed to ${length(self.input)} servers"
  }
}

output "web_ids" {
  value = terraform_data.web[*].id
}

output "connection_string" {
  value     = "postgres://app:${var.db_password}@db.internal:5432/app"
  sensitive = true
}

# Not sensitive to the tool, but its name looks secret to the redaction:
# its value is redacted, and it keeps the shape of every other output.
output "password_out" {
  value = "generation-${var.generation}"
}
