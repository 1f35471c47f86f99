resource "time_static" "default" {}
