package pulumiyaml

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPackageDeclarations: sdks/*.yaml declarations and Pulumi.yaml's packages: pin the
// package's plugin version as pulumi-yaml reads them; a version option wins; files that are
// not declarations are skipped.
func TestPackageDeclarations(t *testing.T) {
	st := mustParse(t, map[string]string{
		"Pulumi.yaml": "name: p\nruntime: yaml\npackages:\n  random: random@4.16.0\n  tls: {source: tls, version: 5.0.0}\n",
		"Main.yaml": `resources:
  a: {type: simple:index:Resource}
  b: {type: random:index/randomId:RandomId}
  c: {type: tls:index:Key}
  d: {type: pinned:index:Thing, options: {version: 9.0.0}}
`,
		"sdks/simple.yaml": "packageDeclarationVersion: 1\nname: simple\nversion: 2.0.0\n",
		"sdks/pinned.yaml": "packageDeclarationVersion: 1\nname: pinned\nversion: 1.0.0\n",
		"sdks/notes.yaml":  "just: some other file\n",
		"sdks/README.md":   "packageDeclarationVersion: 1\nname: simple\nversion: 9.9.9\n",
	}, nil)
	got := map[string]string{}
	for _, r := range st.Requirements {
		got[r.Name] = r.Versions
	}
	want := map[string]string{"simple": "2.0.0", "random": "4.16.0", "tls": "5.0.0", "pinned": "9.0.0"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("versions: -want +got\n%s", d)
	}
}

// TestParameterizedPackages: a package a parameterization declares is its own requirement,
// named by its namespace, pinned to the base plugin's version, whose source carries the base
// plugin and the parameterization (two packages of one base plugin are two requirements).
func TestParameterizedPackages(t *testing.T) {
	st := mustParse(t, map[string]string{
		"Pulumi.yaml": "name: p\nruntime: yaml\n",
		"Main.yaml":   "resources:\n  a: {type: hi:index:Hello}\n  b: {type: bye:index:Goodbye}\n",
		"sdks/hi.yaml": "packageDeclarationVersion: 1\nname: parameterized\nversion: 1.2.3\n" +
			"parameterization: {name: hi, version: 2.0.0, value: SGVsbG8=}\n",
		"sdks/bye.yaml": "packageDeclarationVersion: 1\nname: parameterized\nversion: 1.2.3\n" +
			"parameterization: {name: bye, version: 3.0.0, value: R29vZGJ5ZQ==}\n",
	}, nil)
	got := map[string]Parameterization{}
	for _, r := range st.Requirements {
		pz, ok := ParameterizationOf(r.Source)
		if !ok || r.Versions != "1.2.3" {
			t.Fatalf("requirement %s: source %q, versions %q: want a parameterized source at the base plugin's version", r.Name, r.Source, r.Versions)
		}
		if pkg, _ := PackageOf(r.Source); pkg != "parameterized" {
			t.Errorf("requirement %s: plugin %q, want parameterized", r.Name, pkg)
		}
		got[r.Name] = pz
	}
	want := map[string]Parameterization{
		"hi":  {Plugin: "parameterized", Name: "hi", Version: "2.0.0", Value: []byte("Hello")},
		"bye": {Plugin: "parameterized", Name: "bye", Version: "3.0.0", Value: []byte("Goodbye")},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("parameterizations: -want +got\n%s", d)
	}
	if _, ok := ParameterizationOf(Source("simple")); ok {
		t.Error("a plain package's source carries a parameterization")
	}
}

func TestPackageDeclarationRefusals(t *testing.T) {
	for name, c := range map[string]struct {
		files map[string]string
		want  string
	}{
		"noName": {map[string]string{"sdks/x.yaml": "packageDeclarationVersion: 1\nversion: 1.0.0\n"}, "package name is required"},
		"extension": {map[string]string{"sdks/sub.yaml": "packageDeclarationVersion: 1\nname: simple\nversion: 1.2.3\nextension: {name: more, version: 2.0.0, value: eA==}\n"},
			"package simple extends plugin simple (extension:): not supported yet by cairn"},
		"badValue": {map[string]string{"sdks/sub.yaml": "packageDeclarationVersion: 1\nname: parameterized\nversion: 1.2.3\nparameterization: {name: simple, version: 2.0.0, value: '%%%'}\n"},
			"parameterization value must be base64"},
		"twoVersions": {map[string]string{"sdks/a.yaml": "packageDeclarationVersion: 1\nname: simple\nversion: 1.0.0\n", "sdks/b.yaml": "packageDeclarationVersion: 1\nname: simple\nversion: 2.0.0\n"},
			"package simple is declared at version 2.0.0 here and 1.0.0 in sdks/a.yaml"},
		"localSource": {map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\npackages:\n  simple: ./plugins/simple\n"}, `source "./plugins/simple" is not supported yet`},
	} {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\n", "Main.yaml": "resources:\n  a: {type: simple:index:Resource}\n"}
			for k, v := range c.files {
				files[k] = v
			}
			_, ds := Parse(context.Background(), files, "dev", nil)
			if find(ds, c.want) == nil {
				t.Errorf("want %q, got %v", c.want, ds)
			}
		})
	}
}

// TestMainFinds: the program is Main.json, Main.yaml or Pulumi.yaml of main: (a directory or
// a file), and the package declarations are read below that directory only.
func TestMainFinds(t *testing.T) {
	st := mustParse(t, map[string]string{
		"Pulumi.yaml":            "name: p\nruntime: yaml\nmain: app/\n",
		"app/Main.yaml":          "resources:\n  inApp: {type: simple:index:Resource}\n",
		"app/sdks/simple.yaml":   "packageDeclarationVersion: 1\nname: simple\nversion: 2.0.0\n",
		"other/sdks/simple.yaml": "packageDeclarationVersion: 1\nname: simple\nversion: 3.0.0\n",
	}, nil)
	if st.Resource("inApp") == nil || st.Requirement("simple").Versions != "2.0.0" {
		t.Errorf("resources %v, requirement %+v", st.Resources, st.Requirement("simple"))
	}
	st = mustParse(t, map[string]string{
		"Pulumi.yaml":     "name: p\nruntime: yaml\nmain: prog/stack.yaml\n",
		"prog/stack.yaml": "resources:\n  named: {type: simple:index:Resource}\n",
	}, nil)
	if st.Resource("named") == nil {
		t.Errorf("main: naming a file: resources %v", st.Resources)
	}
	st = mustParse(t, map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\n", "Main.json": `{"resources": {"j": {"type": "simple:index:Resource"}}}`}, nil)
	if st.Resource("j") == nil {
		t.Errorf("Main.json: resources %v", st.Resources)
	}
	_, ds := Parse(context.Background(), map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\nmain: nowhere\n"}, "dev", nil)
	if find(ds, "main: nowhere: no Main.json, Main.yaml or Pulumi.yaml there") == nil {
		t.Errorf("a main: without a program: %v", ds)
	}
}

const simpleSchema = `{"name": "simple", "resources": {"simple:index:Resource": {}, "simple:index/randomId:RandomId": {},
  "simple:CoolModule/someResource:SomeResource": {}}, "functions": {"simple:index:myInvoke": {}}}`

// TestTypeTokens: tokens are resolved against the schema as pulumi-yaml resolves them.
func TestTypeTokens(t *testing.T) {
	tokens, err := decodeTokens([]byte(simpleSchema))
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"simple:Resource":                "simple:index:Resource",
		"simple:index:Resource":          "simple:index:Resource",
		"simple:RandomId":                "simple:index/randomId:RandomId",
		"simple:index:RandomId":          "simple:index/randomId:RandomId",
		"simple:CoolModule:SomeResource": "simple:CoolModule/someResource:SomeResource",
		"simple:resource":                "simple:index:Resource",
		"simple:Nope":                    "",
		"simple":                         "",
		"simple:a:b:c":                   "",
	} {
		got, ok := canonical(in, tokens.declaredResources)
		if got != want || ok != (want != "") {
			t.Errorf("canonical(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// TestParseResolvesTypes: with a schema source, resources carry the canonical token; a
// token the schema lacks and a schema that cannot be read are errors at the type.
func TestParseResolvesTypes(t *testing.T) {
	files := map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\n", "Main.yaml": "resources:\n  a: {type: simple:Resource}\n  p: {type: pulumi:providers:simple}\n",
		"sdks/simple.yaml": "packageDeclarationVersion: 1\nname: simple\nversion: 2.0.0\n"}
	var asked []string
	schema := func(_ context.Context, source, version string) ([]byte, error) {
		pkg, _ := PackageOf(source)
		asked = append(asked, pkg+"@"+version)
		return []byte(simpleSchema), nil
	}
	st, ds := ParseWith(context.Background(), files, "dev", nil, Options{Schema: schema})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	if got := st.Resource("a").Type; got != "simple:index:Resource" {
		t.Errorf("type %q", got)
	}
	if got := st.Resource("p").Type; got != "pulumi:providers:simple" {
		t.Errorf("provider type %q", got)
	}
	if d := cmp.Diff([]string{"simple@2.0.0"}, asked); d != "" {
		t.Errorf("schemas asked: -want +got\n%s", d)
	}
	files["Main.yaml"] = "resources:\n  a: {type: simple:Nope}\n"
	if _, ds := ParseWith(context.Background(), files, "dev", nil, Options{Schema: schema}); find(ds, `unable to find resource type "simple:Nope" in resource provider "simple"`) == nil {
		t.Errorf("unknown type: %v", ds)
	}
	failing := func(context.Context, string, string) ([]byte, error) { return nil, errors.New("no plugin") }
	if _, ds := ParseWith(context.Background(), files, "dev", nil, Options{Schema: failing}); find(ds, "cannot read the schema of package simple: no plugin") == nil {
		t.Errorf("failing schema: %v", ds)
	}
}
