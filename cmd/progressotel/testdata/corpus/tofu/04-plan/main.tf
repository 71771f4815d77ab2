resource "terraform_data" "network" {
  input = "10.0.0.0/16"
}
resource "terraform_data" "subnet" {
  count = 3
  input = cidrsubnet(terraform_data.network.input, 8, count.index)
}
output "subnets" { value = terraform_data.subnet[*].input }
