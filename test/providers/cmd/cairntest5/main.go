// Command cairntest5 serves the cairntest test provider over Terraform plugin protocol 5.
// Install it as terraform-provider-cairntest_v<version> (see test/providers/README.md).
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/cairn-dev/cairn/test/providers/internal/cairntest"
)

// version is set with -ldflags "-X main.version=...".
var version = "0.1.0"

func main() {
	debug := flag.Bool("debug", false, "serve for a debugger (prints TF_REATTACH_PROVIDERS)")
	flag.Parse()
	err := providerserver.Serve(context.Background(), cairntest.New(version, 5), providerserver.ServeOpts{
		Address:         cairntest.Address,
		Debug:           *debug,
		ProtocolVersion: 5,
	})
	if err != nil {
		log.Fatal(err)
	}
}
