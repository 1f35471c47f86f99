package main

import (
	"context"
	"os"

	"github.com/cairn-dev/cairn/kube/provider"
)

// asPlugin reports whether a plugin host (cairn or terraform) launched this binary: go-plugin
// hosts set the magic cookie, and plugin binaries take no arguments.
func asPlugin() bool { return os.Getenv("TF_PLUGIN_MAGIC_COOKIE") != "" }

func servePlugin() error { return provider.Serve(context.Background()) }
