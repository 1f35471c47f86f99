package pulumiyaml

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/template"
)

func TestResourceOptions(t *testing.T) {
	fs := map[string]string{"Pulumi.yaml": `name: p
runtime: yaml
config:
  createTimeout:
    type: string
resources:
  prov:
    type: pulumi:providers:simple
  parent:
    type: simple:Resource
    options:
      provider: ${prov}
      protect: true
      retainOnDelete: true
  child:
    type: simple:Resource
    options:
      parent: ${parent}
      customTimeouts: {create: '${createTimeout}', update: 10m, delete: .2m, read: 1h}
  grandchild:
    type: simple:Resource
    options:
      parent: ${child}
      protect: false
      additionalSecretOutputs: [value]
      replaceOnChanges: ['tags["a.b"]', 'list[0]', '*']
      hideDiffs: [value]
      deletedWith: ${parent}
      deleteBeforeReplace: false
      aliases:
        - urn:pulumi:dev::p::simple:index:Resource::oldName
        - name: older
        - noParent: true
        - urn:pulumi:other::p::simple:index:Resource::elsewhere
      import: abc-${createTimeout}
`}
	st, ds := Parse(context.Background(), fs, "dev", map[string]string{"createTimeout": "5m"})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	parent, child, grand := st.Resource("parent"), st.Resource("child"), st.Resource("grandchild")
	for _, r := range []*template.Resource{child, grand} {
		if r.Provider != ProviderAddr("simple", "prov") {
			t.Errorf("%s: provider %q, want the parent's prov (inherited)", r.Name, r.Provider)
		}
	}
	if !parent.PreventDestroy || !child.PreventDestroy || grand.PreventDestroy {
		t.Errorf("protect: parent %v child %v grandchild %v, want true true false (inherited, then overridden)",
			parent.PreventDestroy, child.PreventDestroy, grand.PreventDestroy)
	}
	if child.DeletionPolicy != template.Retain || child.UpdateReplacePolicy != template.Retain || grand.DeletionPolicy != template.Retain {
		t.Errorf("retainOnDelete is inherited down the chain: child %s/%s grandchild %s", child.DeletionPolicy, child.UpdateReplacePolicy, grand.DeletionPolicy)
	}
	if diff := cmp.Diff(template.Timeouts{Create: 5 * time.Minute, Update: 10 * time.Minute, Delete: 12 * time.Second, Read: time.Hour}, child.Timeouts); diff != "" {
		t.Errorf("timeouts -want +got:\n%s", diff)
	}
	want := template.Options{
		Parent: "child", Timeouts: template.Timeouts{}, SecretOutputs: []string{"value"},
		ReplaceOnChanges: []string{`tags["a.b"]`, "list[0]", "*"}, HideDiffs: []string{"value"}, DeletedWith: "parent",
		Aliases: []string{"oldName", "older"}, ImportID: "abc-5m",
	}
	if diff := cmp.Diff(want, grand.Options); diff != "" {
		t.Errorf("grandchild options -want +got:\n%s", diff)
	}
	if grand.CreateBeforeDestroy != true || !child.ProviderOrdersReplace {
		t.Errorf("deleteBeforeReplace: false fixes create-first; unset leaves the order to the provider")
	}
	if diff := cmp.Diff([]string{"child", "parent", "prov"}, grand.DependsOn); diff != "" {
		t.Errorf("grandchild deps -want +got:\n%s", diff)
	}
	var moves []string
	for _, m := range st.Moves {
		moves = append(moves, m.From+"->"+m.To)
	}
	if diff := cmp.Diff([]string{"oldName->grandchild", "older->grandchild"}, moves); diff != "" {
		t.Errorf("moves -want +got:\n%s", diff)
	}
	if im := st.Import("grandchild"); im == nil {
		t.Errorf("the import option makes an import")
	}
}

func TestResourceOptionRefusals(t *testing.T) {
	for name, c := range map[string]struct{ opts, want, path string }{
		"timeoutFromResource": {"customTimeouts: {create: '${other.value}'}", "the create option cannot depend on resources", "resources.r.options.customTimeouts.create"},
		"badTimeout":          {"customTimeouts: {create: soon}", `customTimeouts.create: "soon" is not a duration`, "resources.r.options.customTimeouts.create"},
		"badPath":             {"replaceOnChanges: ['a[x]']", "replaceOnChanges: invalid property path", "resources.r.options.replaceOnChanges"},
		"replaceWithNotList":  {"replaceWith: '${other}'", "replaceWith must be a list of resources", "resources.r.options.replaceWith"},
		"replaceWithNotRes":   {"replaceWith: ['${other.value}']", "expected a resource reference", "resources.r.options.replaceWith"},
		"envVarNotProvider":   {"envVarMappings: {A: B}", "envVarMappings can only be used with provider resources", "resources.r.options.envVarMappings"},
		"hooks":               {"hooks: {}", "the hooks option is not supported by cairn", "resources.r.options.hooks"},
		"parentNotResource":   {"parent: ${nope}", "${nope} is not a resource", "resources.r.options.parent"},
	} {
		t.Run(name, func(t *testing.T) {
			fs := map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\nresources:\n  other:\n    type: x:y:Z\n  r:\n    type: x:y:Z\n    options:\n      " + c.opts + "\n"}
			_, ds := Parse(context.Background(), fs, "dev", nil)
			d := find(ds, c.want)
			if d == nil {
				t.Fatalf("want %q, got %v", c.want, ds)
			}
			if d.Path != c.path || d.Range.Line != 9 {
				t.Errorf("at %s line %d, want %s line 9", d.Path, d.Range.Line, c.path)
			}
		})
	}
}
