resource "terraform_data" "ok" {
  input = "fine"
}
resource "terraform_data" "broken" {
  depends_on = [terraform_data.ok]
  provisioner "local-exec" {
    command = "echo about to fail; exit 3"
  }
}
