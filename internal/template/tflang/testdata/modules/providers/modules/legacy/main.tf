provider "time" {}

resource "time_static" "own" {}
