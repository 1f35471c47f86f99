package tfplugin

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
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
func executableKey(path string) string {
	if path == "" {
		return ""
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s\x00%d\x00%d", abs, fi.Size(), fi.ModTime().UnixNano())
}

func cachedSchemas(key string, version int) *schemas {
	if key == "" {
		return nil
	}
	schemaCache.Lock()
	defer schemaCache.Unlock()
	return schemaCache.m[fmt.Sprintf("%s\x00v%d", key, version)]
}

func storeSchemas(key string, version int, s *schemas) {
	if key == "" {
		return
	}
	schemaCache.Lock()
	defer schemaCache.Unlock()
	schemaCache.m[fmt.Sprintf("%s\x00v%d", key, version)] = s
}
