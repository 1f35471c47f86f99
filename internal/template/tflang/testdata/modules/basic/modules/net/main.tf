variable "name" {
  type = string
}

variable "trigger" {
  type = string
}

variable "size" {
  type    = number
  default = 3
}

resource "time_static" "t" {
  triggers = {
    name    = var.name
    trigger = var.trigger
    size    = var.size
  }
}

output "id" {
  value = time_static.t.id
}

output "name" {
  value = var.name
}
