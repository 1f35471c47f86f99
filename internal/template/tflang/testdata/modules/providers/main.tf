terraform {
  required_providers {
    time = {
      source  = "hashicorp/time"
      version = ">= 0.9"
    }
  }
}

provider "time" {}

provider "time" {
  alias = "west"
}

module "inherits" {
  source = "./modules/plain"
}

module "mapped" {
  source = "./modules/child"
  providers = {
    time      = time.west
    time.east = time
  }
}

module "legacy" {
  source = "./modules/legacy"
}
