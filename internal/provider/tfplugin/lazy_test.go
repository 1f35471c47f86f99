package tfplugin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/value"
	"github.com/cairn-dev/cairn/test/providerbin"
)

// A provider whose package's schemas are in the disk cache decodes configuration, answers
// StateCurrent and takes a lazy configuration without starting its plugin; the first real
// call starts and configures it. Another package hash, or an entry that does not decode,
// starts the plugin as before.
func TestDiskSchemasStartNoPlugin(t *testing.T) {
	eachProtocol(t, func(t *testing.T, protocol int) {
		ctx := testCtx(t)
		exe := providerbin.Cairntest(t, protocol)
		cache, state := t.TempDir(), t.TempDir()
		open := func(hash string) *Provider {
			p := New(Config{Name: "cairntest", Executable: exe, SchemaCacheDir: cache, PackageHash: hash})
			t.Cleanup(func() { p.Close() })
			return p
		}
		providerSrc := fmt.Sprintf("state_dir = %q\napi_token = \"tok\"", state)

		first := open("h1:one")
		cfg := value.Secret(decodeConfig(t, first, provider.SchemaProvider, "", providerSrc))
		resp, err := first.Configure(ctx, provider.ConfigureRequest{Config: cfg})
		noErrors(t, "Configure", resp.Diagnostics, err)
		props := decodeConfig(t, first, provider.SchemaResource, "cairntest_thing", `name = "alpha"`)
		cr, err := first.Create(ctx, provider.CreateRequest{Resource: thing, Props: props})
		noErrors(t, "Create", cr.Diagnostics, err)
		if first.proc == nil {
			t.Fatal("the first provider did not start its plugin")
		}

		second := open("h1:one")
		cfg2 := value.Secret(decodeConfig(t, second, provider.SchemaProvider, "", providerSrc))
		decodeConfig(t, second, provider.SchemaResource, "cairntest_thing", `name = "alpha"`)
		if !second.StateCurrent(ctx, "cairntest_thing", cr.Private) {
			t.Error("StateCurrent = false for a state just created")
		}
		second.ConfigureLazily(provider.ConfigureRequest{Config: cfg2})
		if second.proc != nil {
			t.Fatal("schemas, StateCurrent and a lazy configuration started the plugin")
		}
		rd, err := second.Read(ctx, provider.ReadRequest{Resource: thing, ID: cr.ID, Outputs: stored(t, cr.Outputs), Private: cr.Private})
		noErrors(t, "Read", rd.Diagnostics, err)
		if second.proc == nil || rd.ID != cr.ID {
			t.Fatalf("Read after a lazy configuration: started %v, id %q (want %q)", second.proc != nil, rd.ID, cr.ID)
		}

		other := open("h1:two")
		decodeConfig(t, other, provider.SchemaProvider, "", providerSrc)
		if other.proc == nil {
			t.Error("another package hash used the cached schemas")
		}

		path := diskSchemaPath(cache, "h1:one")
		if err := os.WriteFile(path, []byte(diskSchemaMagic+"5\ngarbage"), 0o600); err != nil {
			t.Fatal(err)
		}
		schemaCache.Lock()
		schemaCache.m = map[string]*schemas{} // as in a new cairn process
		schemaCache.Unlock()
		corrupt := open("h1:one")
		decodeConfig(t, corrupt, provider.SchemaProvider, "", providerSrc)
		if corrupt.proc == nil {
			t.Error("an entry that does not decode was trusted")
		}
		if s, _ := readDiskSchemas(path); s == nil {
			t.Error("the undecodable entry was not replaced")
		}
	})
}

// A lazy configuration the provider refuses fails the first call that needs the plugin, and
// every later one.
func TestLazyConfigurationFailsFirstCall(t *testing.T) {
	ctx := testCtx(t)
	p := New(Config{Name: "cairntest", Executable: providerbin.Cairntest(t, 6)})
	t.Cleanup(func() { p.Close() })
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := decodeConfig(t, p, provider.SchemaProvider, "", fmt.Sprintf("state_dir = %q", filepath.Join(file, "sub")))
	p.ConfigureLazily(provider.ConfigureRequest{Config: cfg})
	props := decodeConfig(t, p, provider.SchemaResource, "cairntest_thing", `name = "alpha"`)
	for i := 0; i < 2; i++ {
		_, err := p.Create(ctx, provider.CreateRequest{Resource: thing, Props: props})
		if err == nil || !strings.Contains(err.Error(), "cannot configure") || !strings.Contains(err.Error(), "state directory") {
			t.Fatalf("Create %d: %v; want the configuration's failure", i, err)
		}
	}
}
