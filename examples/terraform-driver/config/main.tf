# The demo's configuration: a network, three web servers, a database and an
# app, all terraform_data resources with local-exec provisioners, so the
# demo needs no provider download and no network. The provisioners take a
# few seconds (an apply of about 5 s), so that the tree is seen growing live.

variable "db_password" {
  type      = string
  sensitive = true
}

resource "terraform_data" "network" {
  input = "10.0.0.0/16"

  provisioner "local-exec" {
    command = "echo allocating 10.0.0.0/16; sleep 1; echo network ready"
  }
}

resource "terraform_data" "web" {
  count      = 3
  input      = "web-${count.index}"
  depends_on = [terraform_data.network]

  provisioner "local-exec" {
    command = "echo web-${count.index} booting; sleep ${count.index + 1}.5; echo web-${count.index} serving on :8080"
  }
}

resource "terraform_data" "database" {
  input      = var.db_password
  depends_on = [terraform_data.network]

  provisioner "local-exec" {
    command = "echo database initialising; sleep 2; echo database accepting connections"
  }
}

resource "terraform_data" "app" {
  input = [for w in terraform_data.web : w.id]

  provisioner "local-exec" {
    command = "echo deploying the app; sleep 1; echo app deployed to ${length(self.input)} servers"
  }
}

output "web_ids" {
  value = terraform_data.web[*].id
}

output "database_url" {
  value     = "postgres://app:${var.db_password}@db.internal:5432/app"
  sensitive = true
}
