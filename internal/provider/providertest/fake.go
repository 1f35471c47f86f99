// Package providertest has a provider for tests: Fake works in memory out of the box and lets
// each test override any method with a function field.
package providertest

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/value"
)

// Call is one recorded provider call.
type Call struct {
	Method   string // Create, Update, Delete
	Name     string // logical id
	ID       string // physical id the call was about (Update, Delete) or returned (Create)
	Token    string
	Props    cty.Value
	OldProps cty.Value
}

// Fake is an in-memory provider. A nil XxxFn uses the working default: Create returns the id
// "<logical id>-<n>" and echoes the properties as outputs; Update keeps the id; Diff compares
// properties. Calls are recorded in order.
type Fake struct {
	provider.Unimplemented
	CheckFn  func(context.Context, provider.CheckRequest) (provider.CheckResponse, error)
	DiffFn   func(context.Context, provider.DiffRequest) (provider.DiffResponse, error)
	CreateFn func(context.Context, provider.CreateRequest) (provider.CreateResponse, error)
	UpdateFn func(context.Context, provider.UpdateRequest) (provider.UpdateResponse, error)
	DeleteFn func(context.Context, provider.DeleteRequest) (provider.DeleteResponse, error)
	// ReadFn, when set, makes the fake able to read resources back (Capabilities().Read).
	ReadFn func(context.Context, provider.ReadRequest) (provider.ReadResponse, error)

	mu    sync.Mutex
	n     int
	calls []Call
	live  map[string]bool // physical ids that exist
}

var _ provider.Provider = (*Fake)(nil)

func (f *Fake) record(c Call) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, c)
}

// Calls returns the recorded Create, Update and Delete calls in order.
func (f *Fake) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.calls...)
}

// Live returns the physical ids that exist, sorted.
func (f *Fake) Live() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for id := range f.live {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func (f *Fake) setLive(id string, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.live == nil {
		f.live = map[string]bool{}
	}
	if on {
		f.live[id] = true
	} else {
		delete(f.live, id)
	}
}

// Capabilities says the fake can read when ReadFn is set.
func (f *Fake) Capabilities() provider.Capabilities {
	return provider.Capabilities{Read: f.ReadFn != nil}
}

// Read calls ReadFn.
func (f *Fake) Read(ctx context.Context, req provider.ReadRequest) (provider.ReadResponse, error) {
	if f.ReadFn == nil {
		return f.Unimplemented.Read(ctx, req)
	}
	return f.ReadFn(ctx, req)
}

func (f *Fake) Check(ctx context.Context, req provider.CheckRequest) (provider.CheckResponse, error) {
	if f.CheckFn != nil {
		return f.CheckFn(ctx, req)
	}
	return provider.CheckResponse{Props: req.Props}, nil
}

func (f *Fake) Diff(ctx context.Context, req provider.DiffRequest) (provider.DiffResponse, error) {
	if f.DiffFn != nil {
		return f.DiffFn(ctx, req)
	}
	var keys []string
	for _, k := range union(value.Keys(req.OldProps), value.Keys(req.NewProps)) {
		o, _ := value.Get(req.OldProps, k)
		n, ok := value.Get(req.NewProps, k)
		if !ok || o == cty.NilVal || !n.IsWhollyKnown() {
			keys = append(keys, k)
			continue
		}
		if eq, _ := o.Equals(n).Unmark(); !eq.True() { // secrets (NoEcho) are marked
			keys = append(keys, k)
		}
	}
	return provider.DiffResponse{Changed: len(keys) > 0, ChangedKeys: keys}, nil
}

func (f *Fake) Create(ctx context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
	resp, err := provider.CreateResponse{}, error(nil)
	if f.CreateFn != nil {
		resp, err = f.CreateFn(ctx, req)
	} else {
		f.mu.Lock()
		f.n++
		resp = provider.CreateResponse{ID: fmt.Sprintf("%s-%d", req.Resource.Name, f.n), Outputs: req.Props}
		f.mu.Unlock()
	}
	if err == nil && !resp.Diagnostics.HasErrors() {
		f.setLive(resp.ID, true)
	}
	f.record(Call{Method: "Create", Name: req.Resource.Name, ID: resp.ID, Token: req.Token, Props: req.Props})
	return resp, err
}

func (f *Fake) Update(ctx context.Context, req provider.UpdateRequest) (provider.UpdateResponse, error) {
	resp, err := provider.UpdateResponse{ID: req.ID, Outputs: req.NewProps}, error(nil)
	if f.UpdateFn != nil {
		resp, err = f.UpdateFn(ctx, req)
	}
	if err == nil && !resp.Diagnostics.HasErrors() {
		f.setLive(resp.ID, true)
	}
	f.record(Call{Method: "Update", Name: req.Resource.Name, ID: req.ID, Token: req.Token, Props: req.NewProps, OldProps: req.OldProps})
	return resp, err
}

func (f *Fake) Delete(ctx context.Context, req provider.DeleteRequest) (provider.DeleteResponse, error) {
	resp, err := provider.DeleteResponse{}, error(nil)
	if f.DeleteFn != nil {
		resp, err = f.DeleteFn(ctx, req)
	}
	if err == nil && !resp.Diagnostics.HasErrors() {
		f.setLive(req.ID, false)
	}
	f.record(Call{Method: "Delete", Name: req.Resource.Name, ID: req.ID, Token: req.Token, Props: req.Props})
	return resp, err
}

func union(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range append(append([]string(nil), a...), b...) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
