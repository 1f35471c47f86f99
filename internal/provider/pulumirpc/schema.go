package pulumirpc

import (
	"context"
	"fmt"
	"sync"

	"github.com/cairn-dev/cairn/internal/provider/schemacache"
)

// The package schema (GetSchema's JSON) is what a Pulumi YAML program's type tokens are
// resolved against (`random:RandomId` → `random:index/randomId:RandomId`). It is read once per
// plugin build and kept on disk, as tfplugin keeps terraform schemas, so that a run whose
// program pins nothing new starts no plugin for it. An entry is keyed by the binary's resolved
// path, size and modification time (a reinstall is read again) and the package name.

// schemaMagic starts every disk entry; a new layout changes it, and old entries are ignored.
const schemaMagic = "cairn pulumi schema 1\n"

var memSchemas = struct {
	sync.Mutex
	m map[string][]byte
}{m: map[string][]byte{}}

// Schema returns the package schema of the plugin opts names: from memory, then from the disk
// cache under opts.SchemaCacheDir, else from a plugin launched for it and stopped again.
func Schema(ctx context.Context, opts Options) ([]byte, error) {
	key := schemaKey(schemaKeyPackage(opts), opts.Executable)
	if key != "" {
		memSchemas.Lock()
		b, ok := memSchemas.m[key]
		memSchemas.Unlock()
		if ok {
			return b, nil
		}
	}
	path := schemaPath(opts.SchemaCacheDir, key)
	if b := readSchema(path); b != nil {
		remember(key, b)
		return b, nil
	}
	p, err := Launch(ctx, opts)
	if err != nil {
		return nil, err
	}
	b, err := p.PackageSchema(ctx)
	if cerr := p.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("provider %s: %w", opts.Package, cerr)
	}
	if err != nil {
		return nil, err
	}
	remember(key, b)
	writeSchema(path, b)
	return b, nil
}

func remember(key string, b []byte) {
	if key == "" {
		return
	}
	memSchemas.Lock()
	defer memSchemas.Unlock()
	memSchemas.m[key] = b
}

// schemaKey identifies a plugin build serving pkg; "" when the binary cannot be read.
func schemaKey(pkg, executable string) string {
	build := schemacache.BuildKey(executable)
	if build == "" {
		return ""
	}
	return pkg + "\x00" + build
}

func schemaPath(dir, key string) string { return schemacache.Path(dir, "pulumi-schemas", key) }

// readSchema returns the entry at path, nil when there is none usable.
func readSchema(path string) []byte { return schemacache.Read(path, schemaMagic) }

// writeSchema stores an entry; a failure only costs a launch next time.
func writeSchema(path string, b []byte) { schemacache.Write(path, schemaMagic, b) }
