package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/provider"
)

// schemaCounter counts the resource schema reads of a pcFake: each evaluation of a resource's
// configuration reads its schema once.
type schemaCounter struct {
	*pcFake
	mu    sync.Mutex
	reads int
}

func (c *schemaCounter) Schema(ctx context.Context, req provider.SchemaRequest) (provider.Schema, error) {
	if req.Kind == provider.SchemaResource {
		c.mu.Lock()
		c.reads++
		c.mu.Unlock()
	}
	return c.pcFake.Schema(ctx, req)
}

func (c *schemaCounter) take() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.reads
	c.reads = 0
	return n
}

// TestUnchangedEvaluatedOnce: a re-deploy with nothing changed evaluates each resource once,
// in the load's check, and the run takes that value instead of evaluating it again; a
// resource that did change is evaluated by the run as before, and updated.
func TestUnchangedEvaluatedOnce(t *testing.T) {
	v := "1.0.0"
	f, h := newPCEngine(t, &v)
	c := &schemaCounter{pcFake: f}
	e, err := engine.New(engine.Options{Store: h.store, Providers: provider.NewRegistry(), Plugins: pcPlugins{p: c, version: &v}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Shutdown(context.Background()) })
	h.e = e
	config := func(last string) string {
		var sb strings.Builder
		sb.WriteString(strings.SplitAfter(pcConfig("team-a", "1.0.0"), "}\n}\n")[0])
		for i := range 5 {
			val := "a"
			if i == 4 {
				val = last
			}
			fmt.Fprintf(&sb, "resource \"fake_thing\" \"r%d\" {\n  value = %q\n}\n", i, val)
		}
		return sb.String()
	}
	h.tfDeploy(map[string]string{"main.tf": config("a")})
	c.take()
	h.tfDeploy(map[string]string{"main.tf": config("a")})
	if n := c.take(); n != 5 {
		t.Errorf("no-op re-deploy of 5 resources read resource schemas %d times; want 5 (one evaluation each, in the check)", n)
	}
	f.mu.Lock()
	f.updates = 0
	f.mu.Unlock()
	h.tfDeploy(map[string]string{"main.tf": config("b")})
	if n := c.take(); n != 6 {
		t.Errorf("re-deploy with one resource changed read resource schemas %d times; want 6 (the changed one evaluated again by the run)", n)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.updates != 1 {
		t.Errorf("re-deploy with one resource changed: %d updates; want 1", f.updates)
	}
}
