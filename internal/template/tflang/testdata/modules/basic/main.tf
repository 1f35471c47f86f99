variable "prefix" {
  default = "p"
}

resource "time_static" "root" {}

module "net" {
  source  = "./modules/net"
  name    = "${var.prefix}-net"
  trigger = time_static.root.rfc3339
}

module "counted" {
  source  = "./modules/net"
  count   = 2
  name    = "c${count.index}"
  trigger = "x"
}

module "each" {
  source   = "./modules/net"
  for_each = toset(["a", "b"])
  name     = each.key
  trigger  = "y"
}

module "outer" {
  source     = "./modules/outer"
  depends_on = [time_static.root]
}

resource "time_static" "after" {
  triggers = {
    id = module.net.id
  }
  depends_on = [module.outer]
}

output "net_id" {
  value = module.net.id
}

output "names" {
  value = module.counted[*].name
}

output "each_a" {
  value = module.each["a"].name
}

output "deep" {
  value = module.outer.inner_name
}

output "file" {
  value = module.outer.file
}
