# A provisioner that says nothing for a while: the adapter's own heartbeat
# must show that its operation is still running.

variable "pause" {
  type    = string
  default = "3"
}

resource "terraform_data" "quiet" {
  provisioner "local-exec" {
    command = "sleep ${var.pause}"
  }
}
