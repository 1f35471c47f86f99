package tfmodule

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/hashicorp/go-version"
)

// ManifestPath is where terraform keeps its modules manifest, relative to the root module.
const ManifestPath = ".terraform/modules/modules.json"

// ModulesDir is where remote modules are installed, relative to the root module: the
// package of the call at key "a.b" goes to ModulesDir/a.b.
const ModulesDir = ".terraform/modules"

// Record is one module call as installed: Key is the call path ("" for the root, "a", "a.b"),
// Source the call's source in normal form, Version the registry version chosen, Dir the
// module's directory relative to the root module, slash-separated.
type Record struct {
	Key     string `json:"Key"`
	Source  string `json:"Source"`
	Version string `json:"Version,omitempty"`
	Dir     string `json:"Dir"`
}

// Manifest is modules.json by key.
type Manifest map[string]Record

type manifestFile struct {
	Modules []Record `json:"Modules"`
}

// ParseManifest reads modules.json; empty input is an empty manifest, as in terraform.
// Sources are brought to normal form, so that an older terraform's spelling still matches.
func ParseManifest(src []byte) (Manifest, error) {
	m := Manifest{}
	if len(strings.TrimSpace(string(src))) == 0 {
		return m, nil
	}
	var f manifestFile
	if err := json.Unmarshal(src, &f); err != nil {
		return nil, fmt.Errorf("invalid modules manifest: %w", err)
	}
	for _, r := range f.Modules {
		if r.Version != "" {
			if _, err := version.NewVersion(r.Version); err != nil {
				return nil, fmt.Errorf("invalid modules manifest: version %q of %q: %w", r.Version, r.Key, err)
			}
		}
		if r.Source != "" {
			if s, err := ParseSource(r.Source, false); err == nil {
				r.Source = s.String()
			}
		}
		r.Dir = strings.ReplaceAll(r.Dir, `\`, "/")
		if _, dup := m[r.Key]; dup {
			return nil, fmt.Errorf("invalid modules manifest: two records for %q", r.Key)
		}
		m[r.Key] = r
	}
	return m, nil
}

// Bytes is the manifest as terraform writes it: records sorted by key, compact JSON.
func (m Manifest) Bytes() []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	f := manifestFile{Modules: make([]Record, 0, len(keys))}
	for _, k := range keys {
		r := m[k]
		r.Dir = path.Clean(r.Dir)
		f.Modules = append(f.Modules, r)
	}
	b, _ := json.Marshal(f) // strings only: cannot fail
	return b
}

// Check compares a call with its record: "" when the installed module serves the call, else
// why it does not, in terraform's words.
func (r Record) Check(src Source, constraints version.Constraints) string {
	if r.Source != src.String() {
		return "The source address was changed since this module was installed."
	}
	if len(constraints) == 0 {
		return ""
	}
	if r.Version == "" {
		return "The version constraint was added since this module was installed."
	}
	v, err := version.NewVersion(r.Version)
	if err != nil || !constraints.Check(v) {
		return fmt.Sprintf("The installed version %s does not match the version constraint %q.", r.Version, constraints)
	}
	return ""
}

// Key is the manifest key of a call path.
func Key(path []string) string { return strings.Join(path, ".") }
