resource "terraform_data" "x" {
  input = terraform_data.missing.output
}
