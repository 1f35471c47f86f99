// Command cairn is the cairn CLI and server. main only wires: a context cancelled by SIGINT or
// SIGTERM (the first Ctrl-C goes to the command, which cancels a running deploy), the process
// environment, and app.Start as the way to run cairn.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/cairn-dev/cairn/internal/app"
	"github.com/cairn-dev/cairn/internal/cli"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	interrupt := cli.NewInterrupt(cancel)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		for sig := range sigs {
			if sig == syscall.SIGTERM {
				cancel()
				continue
			}
			interrupt.Signal()
		}
	}()
	code := cli.Run(ctx, os.Args[1:], cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Getenv: os.Getenv, Environ: os.Environ, Start: app.Start, Interrupt: interrupt})
	signal.Stop(sigs)
	cancel()
	app.Cleanup() // no provider plugin outlives cairn
	os.Exit(code)
}
