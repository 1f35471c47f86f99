module "inner" {
  source = "../inner"
  label  = "deep"
}

output "inner_name" {
  value = module.inner.label
}

output "file" {
  value = module.inner.file
}
