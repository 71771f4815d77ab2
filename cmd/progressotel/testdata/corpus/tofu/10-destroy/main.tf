resource "terraform_data" "a" {
  input = "a"
}
resource "terraform_data" "b" {
  input      = "b"
  depends_on = [terraform_data.a]
}
