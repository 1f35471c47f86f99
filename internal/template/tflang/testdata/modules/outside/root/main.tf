module "shared" {
  source = "../shared"
  n      = 1
}
