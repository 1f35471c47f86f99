// Command cairn-kube serves cairn's Kubernetes API for custom resources. `cairn server
// --kube-listen ADDR` starts and supervises it; it is a binary of its own so that the
// Kubernetes server libraries (about 100 MB of binary, minutes of cold build) stay out of
// the cairn binary. See docs/design/005-kube.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/cairn-dev/cairn/kube/server"
)

func main() {
	if asPlugin() {
		if err := servePlugin(); err != nil {
			fmt.Fprintln(os.Stderr, "cairn-kube:", err)
			os.Exit(1)
		}
		return
	}
	listen := flag.String("listen", "127.0.0.1:6443", "HTTPS address of the kube API")
	dir := flag.String("dir", ".cairn/kube", "directory of the kube store and serving certificate")
	cairnURL := flag.String("cairn-url", "", "cairn's API, which checks tokens (required; set by cairn server)")
	hosts := flag.String("hosts", "", "extra host names and addresses for the serving certificate, comma-separated")
	flag.Parse()
	if err := run(*listen, *dir, *cairnURL, *hosts); err != nil {
		fmt.Fprintln(os.Stderr, "cairn-kube:", err)
		os.Exit(1)
	}
}

func run(listen, dir, cairnURL, hosts string) error {
	if cairnURL == "" {
		return fmt.Errorf("--cairn-url is required: the kube API checks tokens with the cairn server")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The database URL comes in the environment, not on the command line, where any user of
	// the machine could read its password.
	database := os.Getenv(server.EnvDatabase)
	if database != "" {
		claims, err := server.OpenClaimsPostgres(database)
		if err != nil {
			return err
		}
		defer claims.Close()
		return serve(ctx, listen, dir, cairnURL, hosts, database, claims)
	}
	claims, err := server.OpenClaims(dir)
	if err != nil {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		if claims, err = server.OpenClaims(dir); err != nil {
			return err
		}
	}
	defer claims.Close()
	return serve(ctx, listen, dir, cairnURL, hosts, "", claims)
}

func serve(ctx context.Context, listen, dir, cairnURL, hosts, database string, claims *server.Claims) error {
	var extra []string
	if hosts != "" {
		extra = strings.Split(hosts, ",")
	}
	s, err := server.Start(ctx, server.Config{Listen: listen, Dir: dir, Hosts: extra,
		Tokens: &server.CairnTokens{URL: cairnURL}, Claims: claims, Database: database})
	if err != nil {
		return err
	}
	// The supervisor reads this line for the address (the port may have been picked).
	fmt.Printf("cairn-kube: serving https://%s cert %s\n", s.Addr, s.CertFile)
	return <-s.Done()
}
