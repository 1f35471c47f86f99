// Command cairn is the cairn CLI and server. main only wires: a context cancelled by SIGINT,
// SIGTERM or SIGHUP, all three taking Ctrl-C's path (the first goes to the command, which
// cancels a running deploy and follows it to its end, so that a CI runner's SIGTERM or a closed
// terminal leaves the stack as Ctrl-C does; the second cancels the context), the process
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
	signal.Notify(sigs, interrupting()...)
	go func() {
		for sig := range sigs {
			interrupt.Receive(sig)
		}
	}()
	code := cli.Run(ctx, os.Args[1:], cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Getenv: os.Getenv, Environ: os.Environ, Start: app.Start, Interrupt: interrupt})
	signal.Stop(sigs)
	cancel()
	app.Cleanup() // no provider plugin outlives cairn
	atExit()
	os.Exit(code)
}

// atExit runs just before the process exits: the benchmarks' profiling build
// (profile_bench.go) writes its CPU profile there.
var atExit = func() {}

// interrupting lists the signals that interrupt cairn. SIGHUP is left out when it is ignored
// already (nohup): notifying it would stop ignoring it.
func interrupting() []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}
