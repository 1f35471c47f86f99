terraform {
  required_providers {
    time = {
      source                = "hashicorp/time"
      version               = "< 1.0"
      configuration_aliases = [time.east]
    }
  }
}

resource "time_static" "default" {}

resource "time_static" "east" {
  provider = time.east
}
