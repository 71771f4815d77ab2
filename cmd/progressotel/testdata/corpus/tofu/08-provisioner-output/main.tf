resource "terraform_data" "db" {
  input = "db"
  provisioner "local-exec" {
    command = "echo migrating; echo 3 migrations applied"
  }
}
