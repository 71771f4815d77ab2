variable "password" {
  type      = string
  default   = "hunter2-pa55"
  sensitive = true
}
resource "terraform_data" "web" {
  count = 2
  input = "web-${count.index}"
}
output "names" { value = terraform_data.web[*].output }
output "port" { value = 8080 }
output "enabled" { value = true }
output "settings" {
  value = { region = "eu-1", zones = ["a", "b"], empty = [] }
}
output "password" {
  value     = var.password
  sensitive = true
}
