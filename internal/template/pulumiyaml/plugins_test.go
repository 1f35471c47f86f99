package pulumiyaml

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/template"
)

const pluginsProject = `name: p
runtime: yaml
plugins:
  providers:
    - name: simple
      path: ./bin
      version: 2.0.0
    - name: simple
      path: /opt/simple-any
    - name: unused
      path: ./nothing
  languages:
    - name: yaml
      path: ./lang
resources:
  r:
    type: simple:Resource
`

// The project's plugins: reach the requirement of their package, relative paths made absolute
// against the project directory, in the order written; unused ones and language plugins do not.
func TestProjectPlugins(t *testing.T) {
	root := t.TempDir()
	st, ds := ParseWith(WithRootDirectory(context.Background(), filepath.ToSlash(root)), map[string]string{"Pulumi.yaml": pluginsProject}, "dev", nil, Options{LocalPlugins: true})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	if len(st.Requirements) != 1 {
		t.Fatalf("requirements: %+v", st.Requirements)
	}
	want := []template.LocalPlugin{{Dir: filepath.Join(root, "bin"), Version: "2.0.0"}, {Dir: "/opt/simple-any"}}
	if diff := cmp.Diff(want, st.Requirements[0].Local); diff != "" {
		t.Errorf("Local -want +got:\n%s", diff)
	}
	if !strings.Contains(ds.Error(), "plugins.languages is ignored") {
		t.Errorf("no warning for the language plugin: %v", ds)
	}
}

// A server that is not the CLI's own, or a request without a project directory, ignores
// plugins: with a warning, and finds plugins in its own places.
func TestProjectPluginsIgnoredWhenNotLocal(t *testing.T) {
	for name, c := range map[string]struct {
		root    string
		allowed bool
	}{"server": {t.TempDir(), false}, "noDirectory": {"", true}} {
		t.Run(name, func(t *testing.T) {
			st, ds := ParseWith(WithRootDirectory(context.Background(), c.root), map[string]string{"Pulumi.yaml": pluginsProject}, "dev", nil, Options{LocalPlugins: c.allowed})
			if ds.HasErrors() {
				t.Fatal(ds)
			}
			if len(st.Requirements[0].Local) != 0 || !strings.Contains(ds.Error(), "plugins: is ignored") {
				t.Errorf("Local %v, diagnostics %v", st.Requirements[0].Local, ds)
			}
		})
	}
}

func TestProjectPluginsRefusals(t *testing.T) {
	for name, c := range map[string]struct{ plugins, want string }{
		"notObject": {"plugins: [a]", "plugins must be an object"},
		"noPath":    {"plugins:\n  providers:\n    - name: simple", "a plugin needs a name and a path"},
		"badKey":    {"plugins:\n  providers:\n    - {name: simple, path: ., frob: x}", `unknown plugin key "frob"`},
		"badKind":   {"plugins:\n  policies: []", `unknown plugins kind "policies"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, ds := Parse(context.Background(), map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\n" + c.plugins + "\n"}, "dev", nil)
			if d := find(ds, c.want); d == nil {
				t.Errorf("want %q, got %v", c.want, ds)
			}
		})
	}
}
