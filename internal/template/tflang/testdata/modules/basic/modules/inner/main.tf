variable "label" {
  type = string
  validation {
    condition     = length(var.label) > 2
    error_message = "The label must be longer than two characters."
  }
}

resource "time_static" "t" {
  triggers = {
    label = var.label
    path  = path.module
  }
}

output "label" {
  value = var.label
}

output "file" {
  value = file("${path.module}/data.txt")
}
