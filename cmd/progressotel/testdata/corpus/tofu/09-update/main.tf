variable "size" {
  type    = string
  default = "small"
}
resource "terraform_data" "vm" {
  input = var.size
}
output "size" { value = terraform_data.vm.output }
