package statetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/state"
)

// RunFunctions runs the suite of state.Functions on a new, empty store s.
func RunFunctions(t *testing.T, s state.Functions) {
	ctx := t.Context()
	f := state.Function{Tenant: "default", Name: "greeter", Kind: "provided", Handler: "h", CodeDir: "/d/greeter-1", Timeout: 30 * time.Second,
		MemoryMB: 128, Concurrency: 4, CreatedAt: time.UnixMilli(1700000000123).UTC()}
	u := state.Function{Tenant: "default", Name: "alpha", Kind: "url", URL: "https://h/x", Timeout: time.Second, MemoryMB: 128, Concurrency: 1}
	withCode := f
	withCode.Code = []byte("PK zip of greeter")
	for _, x := range []state.Function{withCode, u} {
		if err := s.PutFunction(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	// The code is kept for FunctionCode, not handed back with the definition.
	if code, err := s.FunctionCode(ctx, "", "greeter"); err != nil || string(code) != "PK zip of greeter" {
		t.Errorf("FunctionCode = %q, %v; want the zip put", code, err)
	}
	if code, err := s.FunctionCode(ctx, "", "alpha"); err != nil || code != nil {
		t.Errorf("FunctionCode of a url function = %q, %v; want none", code, err)
	}
	if _, err := s.FunctionCode(ctx, "team-c", "greeter"); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("FunctionCode from a tenant without it: %v, want ErrNotFound", err)
	}
	replaced := withCode
	replaced.Code, replaced.Handler = []byte("PK zip 2"), "h2"
	if err := s.ReplaceFunction(ctx, replaced); err != nil {
		t.Fatal(err)
	}
	if code, _ := s.FunctionCode(ctx, "", "greeter"); string(code) != "PK zip 2" {
		t.Errorf("FunctionCode after ReplaceFunction = %q, want the new zip", code)
	}
	if err := s.ReplaceFunction(ctx, f); err != nil {
		t.Fatal(err)
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
