package tflang

import (
	"context"
	"testing"
	"time"
)

func TestDebugAlias(t *testing.T) {
	start := time.Now()
	_, ds := Parse(context.Background(), files("main.tf", "locals {\n  l = [for i in range(1000) : i]\n  b = flatten([for i in range(1000) : local.l])\n  c = flatten([local.b, local.b, local.b])\n}\n"+
		"resource \"time_static\" \"t\" {\n  count = length(local.b)\n}\n"), Options{})
	t.Log(time.Since(start), ds)
}
