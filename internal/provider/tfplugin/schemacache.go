package tfplugin

import (
	"fmt"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/cairn-dev/cairn/internal/provider/schemacache"
	tf5 "github.com/cairn-dev/cairn/internal/tfplugin5"
	tf6 "github.com/cairn-dev/cairn/internal/tfplugin6"
)

// The schema cache keeps the schemas read from a provider binary for the life of the cairn
// process. The engine opens a new Provider (a new plugin process) for every operation; a
// provider whose GetMetadata sets get_provider_schema_optional does not need GetSchema before
// other calls, so later processes of the same binary skip it — GetSchema is the most
// expensive call of big providers (megabytes of schema). The key is the binary's resolved
// path, size and modification time, so a replaced binary is read again.
var schemaCache = struct {
	sync.Mutex
	m map[string]*schemas
}{m: map[string]*schemas{}}

// executableKey identifies a provider build; "" when the file cannot be read.
func executableKey(path string) string { return schemacache.BuildKey(path) }

// memKey is the in-memory cache's key: a build read with one protocol version.
func memKey(key string, version int) string { return fmt.Sprintf("%s\x00v%d", key, version) }

func cachedSchemas(key string, version int) *schemas {
	if key == "" {
		return nil
	}
	schemaCache.Lock()
	defer schemaCache.Unlock()
	return schemaCache.m[memKey(key, version)]
}

func storeSchemas(key string, version int, s *schemas) {
	if key == "" {
		return
	}
	schemaCache.Lock()
	defer schemaCache.Unlock()
	schemaCache.m[memKey(key, version)] = s
}

// The disk cache keeps a provider package's schemas across cairn processes, so that a command
// with nothing for the provider to do (a no-op deploy) decodes configuration, fingerprints the
// provider block and checks stored schema versions without starting the plugin at all. An
// entry is the GetProviderSchema answer as the plugin sent it, keyed by the package's h1:
// hash: a changed binary has another hash, hence another entry. An entry that cannot be read
// or decoded is ignored: the plugin is started and asked, as without the cache.

// diskSchemaMagic starts every entry; a new layout changes it, and old entries are ignored.
const diskSchemaMagic = "cairn provider schemas 1\n"

// diskSchemaPath is the entry of the package with h1: hash pkgHash under dir; "" without one.
func diskSchemaPath(dir, pkgHash string) string {
	if !strings.HasPrefix(pkgHash, "h1:") {
		return ""
	}
	return schemacache.Path(dir, "schemas", pkgHash)
}

// readDiskSchemas decodes the entry at path and the protocol version it was read with; nil
// when there is no usable entry.
func readDiskSchemas(path string) (*schemas, int) {
	b := schemacache.Read(path, diskSchemaMagic)
	if len(b) < 2 {
		return nil, 0
	}
	version, raw := int(b[0]-'0'), b[2:]
	if b[1] != '\n' {
		return nil, 0
	}
	var s *schemas
	var err error
	switch version {
	case 5:
		var r tf5.GetProviderSchema_Response
		if proto.Unmarshal(raw, &r) == nil {
			s, err = schemas5(&r)
		}
	case 6:
		var r tf6.GetProviderSchema_Response
		if proto.Unmarshal(raw, &r) == nil {
			s, err = schemas6(&r)
		}
	}
	if s == nil || err != nil || s.provider == nil || s.diags.HasErrors() {
		return nil, 0
	}
	return s, version
}

// writeDiskSchemas stores an entry atomically (a reader never sees half of one); failing only
// costs the next command a plugin start.
func writeDiskSchemas(path string, version int, raw []byte) {
	if len(raw) == 0 || (version != 5 && version != 6) {
		return
	}
	schemacache.Write(path, diskSchemaMagic, fmt.Appendf(nil, "%d\n%s", version, raw))
}
