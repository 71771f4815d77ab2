# Provisioners that run until they are stopped: "polite" stops on SIGINT,
# "stubborn" ignores it. The markers make their processes findable.

variable "polite_marker" {
  type = string
}

variable "stubborn_marker" {
  type = string
}

resource "terraform_data" "polite" {
  provisioner "local-exec" {
    command = "echo polite ready; sleep ${var.polite_marker}"
  }
}

resource "terraform_data" "stubborn" {
  provisioner "local-exec" {
    command = "trap '' INT; echo stubborn ready; sleep ${var.stubborn_marker}"
  }
}

# Done before the stop: the one operation of three that completes.
resource "terraform_data" "quick" {
  input = "quick"
}
