resource "terraform_data" "app" {
  input = "blue"
}
check "colour" {
  assert {
    condition     = terraform_data.app.output == "green"
    error_message = "the app is not green"
  }
}
