resource "terraform_data" "x" {
  input   = "x"
  no_such = "argument"
}
