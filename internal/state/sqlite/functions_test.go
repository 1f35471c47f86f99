package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/state"
)

func TestFunctions(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "state.db"), testOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f := state.Function{Tenant: "default", Name: "greeter", Kind: "provided", Handler: "h", CodeDir: "/d/greeter-1", Timeout: 30 * time.Second,
		MemoryMB: 128, Concurrency: 4, CreatedAt: time.UnixMilli(1700000000123).UTC()}
	u := state.Function{Tenant: "default", Name: "alpha", Kind: "url", URL: "https://h/x", Timeout: time.Second, MemoryMB: 128, Concurrency: 1}
	for _, x := range []state.Function{f, u} {
		if err := s.PutFunction(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutFunction(ctx, f); !errors.Is(err, state.ErrFunctionExists) {
		t.Errorf("PutFunction of a taken name: %v, want ErrFunctionExists", err)
	}
	got, err := s.GetFunction(ctx, "", "greeter")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(f, got); diff != "" {
		t.Errorf("GetFunction: -want +got\n%s", diff)
	}
	all, err := s.ListFunctions(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]state.Function{u, f}, all); diff != "" {
		t.Errorf("ListFunctions: -want +got\n%s", diff)
	}
	// Another tenant neither sees default's functions nor collides with their names.
	other := f
	other.Tenant, other.Handler = "team-b", "theirs"
	if err := s.PutFunction(ctx, other); err != nil {
		t.Fatalf("PutFunction of a name another tenant uses: %v", err)
	}
	if _, err := s.GetFunction(ctx, "team-c", "greeter"); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("GetFunction from a tenant without it: %v, want ErrNotFound", err)
	}
	if got, err := s.GetFunction(ctx, "team-b", "greeter"); err != nil || got.Handler != "theirs" {
		t.Errorf("GetFunction(team-b) = %+v, %v; want team-b's own", got, err)
	}
	if all, _ := s.ListFunctions(ctx, "team-b"); len(all) != 1 {
		t.Errorf("ListFunctions(team-b) = %+v, want its one function", all)
	}
	if err := s.DeleteFunction(ctx, "team-c", "greeter"); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("DeleteFunction from a tenant without it: %v, want ErrNotFound", err)
	}
	if err := s.DeleteFunction(ctx, "", "greeter"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetFunction(ctx, "", "greeter"); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("GetFunction after delete: %v", err)
	}
	if err := s.DeleteFunction(ctx, "", "greeter"); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("DeleteFunction twice: %v", err)
	}
}
