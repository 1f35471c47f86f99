// Command quickstart deploys examples/quickstart/stack.yaml with cairn on the embedded
// default (state in ./.cairn), its custom resources served by the aws-lambda-go handler in
// handler.go. Run it again to update; pass -delete to delete the stack.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/cairn-dev/cairn/internal/app"
	"github.com/cairn-dev/cairn/internal/cli"
)

//go:embed stack.yaml
var stack []byte

func main() {
	del := flag.Bool("delete", false, "delete the quickstart stack instead of deploying it")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	// A fixed port keeps the ServiceToken, and so the resources, the same across runs.
	ln, err := net.Listen("tcp", "127.0.0.1:18765")
	if err != nil {
		fmt.Fprintln(os.Stderr, "quickstart: cannot start the example handler:", err)
		os.Exit(1)
	}
	go http.Serve(ln, http.HandlerFunc(serve))

	file := filepath.Join(os.TempDir(), "cairn-quickstart-stack.yaml")
	if err := os.WriteFile(file, stack, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
	args := []string{"deploy", "-f", file, "--stack", "quickstart", "--parameter", "HandlerUrl=http://" + ln.Addr().String() + "/"}
	if *del {
		args = []string{"delete", "--stack", "quickstart"}
	}
	os.Exit(cli.Run(ctx, args, cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Start: app.Start}))
}
