package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/app"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/customresource"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/state/sqlite"
)

// handler answers every custom-resource request at once: 200 to the POST, then the SUCCESS
// PUT to the ResponseURL, as a fast Lambda would.
type handler struct{ client *http.Client }

func (h handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var ev map[string]any
	if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	w.WriteHeader(http.StatusOK)
	go func() {
		id, _ := ev["PhysicalResourceId"].(string)
		if id == "" {
			id = fmt.Sprintf("%v-%v", ev["LogicalResourceId"], ev["RequestId"])
		}
		body, _ := json.Marshal(map[string]any{"Status": "SUCCESS", "PhysicalResourceId": id, "StackId": ev["StackId"],
			"RequestId": ev["RequestId"], "LogicalResourceId": ev["LogicalResourceId"], "Data": map[string]any{"Value": id}})
		req, _ := http.NewRequest(http.MethodPut, ev["ResponseURL"].(string), bytes.NewReader(body))
		if resp, err := h.client.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
}

// stackTemplate returns n custom resources; the first chain of them form a dependency chain
// (each reads the previous one's Value), the rest fan out from nothing.
func stackTemplate(n, chain int, token string) string {
	var b strings.Builder
	b.WriteString("AWSTemplateFormatVersion: '2010-09-09'\nResources:\n")
	for i := range n {
		fmt.Fprintf(&b, "  R%d:\n    Type: Custom::Bench\n    Properties:\n      ServiceToken: %s\n      Index: %d\n", i, token, i)
		if i > 0 && i < chain {
			fmt.Fprintf(&b, "      Previous: !GetAtt R%d.Value\n", i-1)
		}
	}
	return b.String()
}

type rig struct {
	e     *engine.Engine
	store *countingStore
	dir   string
	token string
}

func newRig(b *testing.B) *rig {
	dir := b.TempDir()
	db, err := sqlite.Open(filepath.Join(dir, "state.db"), sqlite.Options{Keyring: secrets.Generate()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	store := &countingStore{Store: db}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	cr := customresource.New(customresource.Config{Store: app.CustomRequestStore(store), Key: []byte("bench-key-bench-key-bench-key-32"),
		ResponseURL: base, Client: client})
	mux := http.NewServeMux()
	mux.Handle("/v1/responses/", cr.ResponseHandler())
	mux.Handle("/handler", handler{client: client})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })

	reg := provider.NewRegistry()
	reg.Register("Custom::*", cr)
	e, err := engine.New(engine.Options{Store: store, Providers: reg})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Shutdown(context.Background()) })
	return &rig{e: e, store: store, dir: dir, token: base + "/handler"}
}

func (r *rig) deploy(b *testing.B, stack, tmpl string) {
	op, err := r.e.Deploy(context.Background(), stack, api.DeployRequest{TemplateName: "bench.yaml", Template: tmpl})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	done, err := r.e.Wait(ctx, op.ID)
	if err != nil || done.StackStatus != "CREATE_COMPLETE" {
		b.Fatalf("deploy %s: %+v %v", stack, done, err)
	}
}

func dirSize(dir string) int64 {
	var n int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// BenchmarkCustomResources deploys stacks of custom resources whose in-process handler answers
// at once, through the real engine, SQLite store, custom-resource protocol and response URL.
// Reported: wall time per deploy (ns/op), resources/s, state bytes written per step, and the
// state files' size per resource.
func BenchmarkCustomResources(b *testing.B) {
	cases := []struct {
		name     string
		n, chain int
	}{
		{"fanout-100", 100, 0},
		{"fanout-1000", 1000, 0},
		{"fanout-10000", 10000, 0},
		{"chain-100", 100, 100},
		{"fanout-1000-with-chain-100", 1000, 100},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			r := newRig(b)
			tmpl := stackTemplate(c.n, c.chain, r.token)
			b.ResetTimer()
			start := time.Now()
			before, writesBefore := r.store.bytes.Load(), r.store.writes.Load()
			for i := range b.N {
				r.deploy(b, fmt.Sprintf("s%d", i), tmpl)
			}
			elapsed := time.Since(start)
			steps := float64(c.n * b.N)
			b.ReportMetric(steps/elapsed.Seconds(), "resources/s")
			b.ReportMetric(float64(r.store.bytes.Load()-before)/steps, "state-B/step")
			b.ReportMetric(float64(r.store.writes.Load()-writesBefore)/steps, "writes/step")
			b.ReportMetric(float64(dirSize(r.dir))/steps, "file-B/resource")
		})
	}
}
