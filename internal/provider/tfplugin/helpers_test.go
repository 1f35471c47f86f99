package tfplugin

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/value"
)

// helperEnv makes the test binary act as a tiny cairn that launches a provider and waits to be
// killed (TestKill9LeavesNoProvider).
const helperEnv = "CAIRN_TFPLUGIN_TEST_HELPER"

func TestMain(m *testing.M) {
	if exe := os.Getenv(helperEnv); exe != "" {
		p := New(Config{Name: "helper", Executable: exe})
		if _, err := p.ready(context.Background()); err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
		fmt.Println(p.proc.client.ID())
		time.Sleep(time.Hour)
		os.Exit(0)
	}
	code := m.Run()
	CleanupClients()
	os.Exit(code)
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// decodeConfig decodes HCL with the schema of typ, as the Terraform language does.
func decodeConfig(t *testing.T, p provider.Provider, kind provider.SchemaKind, typ, src string) cty.Value {
	t.Helper()
	s, err := p.Schema(context.Background(), provider.SchemaRequest{Kind: kind, Type: typ})
	if err != nil {
		t.Fatal(err)
	}
	f, diags := hclsyntax.ParseConfig([]byte(src), "test.tf", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	v, diags := hcldec.Decode(f.Body, s.Spec, nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return v
}

// stored passes a value through cairn's state storage, which keeps only JSON and secret paths:
// what the engine hands back on the next operation.
func stored(t *testing.T, v cty.Value) cty.Value {
	t.Helper()
	b, err := value.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := value.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func noErrors(t *testing.T, what string, ds diag.Diagnostics, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if ds.HasErrors() {
		t.Fatalf("%s: %s", what, ds.Err())
	}
}

func attr(v cty.Value, name string) cty.Value {
	v, _ = v.Unmark()
	return v.GetAttr(name)
}

func str(v cty.Value) string {
	v, _ = v.UnmarkDeep()
	if v.IsNull() || !v.IsKnown() {
		return fmt.Sprintf("<%#v>", v)
	}
	return v.AsString()
}
