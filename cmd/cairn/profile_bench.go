//go:build cairnprofile

package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// A build with -tags cairnprofile (bench/ builds one when CAIRN_BENCH_CPUPROFILE is set) writes
// a CPU profile of the whole process to $CAIRN_CPUPROFILE, so that the in-process server's work
// of a `cairn deploy` can be profiled; release builds carry none of this.
func init() {
	path := os.Getenv("CAIRN_CPUPROFILE")
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "CAIRN_CPUPROFILE: %v\n", err)
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "CAIRN_CPUPROFILE: %v\n", err)
		f.Close()
		return
	}
	atExit = func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
