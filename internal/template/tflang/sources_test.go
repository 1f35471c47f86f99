package tflang

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
)

// installedFiles is a configuration as the cairn CLI sends it after installing a registry
// module: the root, modules.json and the installed package with a local submodule.
func installedFiles(rootMain, manifest string) map[string][]byte {
	return map[string][]byte{
		"main.tf":                         []byte(rootMain),
		".terraform/modules/modules.json": []byte(manifest),
		".terraform/modules/label/main.tf": []byte("variable \"name\" {}\nmodule \"sub\" {\n  source = \"./modules/sub\"\n}\n" +
			"output \"path\" {\n  value = path.module\n}\noutput \"sub\" {\n  value = module.sub.path\n}\noutput \"name\" {\n  value = var.name\n}\n"),
		".terraform/modules/label/modules/sub/main.tf": []byte("output \"path\" {\n  value = path.module\n}\n"),
	}
}

const labelManifest = `{"Modules":[{"Key":"","Source":"","Dir":"."},{"Key":"label","Source":"registry.terraform.io/cloudposse/label/null","Version":"0.25.0","Dir":".terraform/modules/label"},{"Key":"label.sub","Source":"./modules/sub","Dir":".terraform/modules/label/modules/sub"}]}`

// outputValues evaluates every output of a parse that must succeed.
func outputValues(t *testing.T, files map[string][]byte, opts Options) map[string]cty.Value {
	t.Helper()
	st, ds := Parse(context.Background(), files, opts)
	if ds.HasErrors() {
		t.Fatalf("Parse: %v", ds.Err())
	}
	out := map[string]cty.Value{}
	for _, o := range st.Outputs {
		out[o.Name] = moduleEval(t, o.Value, moduleScope{})
	}
	return out
}

// A registry module is read from where modules.json says it was installed, and its
// path.module is that directory, as in terraform; a local call inside it is relative to it.
func TestRemoteModuleFromManifest(t *testing.T) {
	root := "module \"label\" {\n  source  = \"cloudposse/label/null\"\n  version = \"~> 0.25\"\n  name = \"x\"\n}\n" +
		"output \"path\" {\n  value = module.label.path\n}\noutput \"sub\" {\n  value = module.label.sub\n}\noutput \"name\" {\n  value = module.label.name\n}\n"
	got := outputValues(t, installedFiles(root, labelManifest), Options{})
	want := map[string]string{"path": ".terraform/modules/label", "sub": ".terraform/modules/label/modules/sub", "name": "x"}
	for k, w := range want {
		if got[k] != cty.StringVal(w) {
			t.Errorf("output %s = %#v, want %q", k, got[k], w)
		}
	}
}

// A parent directory (a module's examples/complete calling "../../") is read from the files
// sent above the root, and path.module is "../..", as in terraform.
func TestParentDirectoryModule(t *testing.T) {
	files := map[string][]byte{
		"main.tf":                   []byte("module \"m\" {\n  source = \"../../\"\n}\noutput \"p\" {\n  value = module.m.p\n}\noutput \"s\" {\n  value = module.m.s\n}\n"),
		"../../main.tf":             []byte("module \"s\" {\n  source = \"./modules/s\"\n}\noutput \"p\" {\n  value = path.module\n}\noutput \"s\" {\n  value = module.s.p\n}\n"),
		"../../modules/s/main.tf":   []byte("output \"p\" {\n  value = path.module\n}\n"),
		"../../examples/x/other.tf": []byte("this is not read"),
	}
	got := outputValues(t, files, Options{})
	if got["p"] != cty.StringVal("../..") || got["s"] != cty.StringVal("../../modules/s") {
		t.Errorf("outputs = %#v, want p ../.. and s ../../modules/s", got)
	}
}

func TestRemoteModuleErrors(t *testing.T) {
	call := func(source, version string) string {
		s := "module \"label\" {\n  source = \"" + source + "\"\n"
		if version != "" {
			s += "  version = \"" + version + "\"\n"
		}
		return s + "  name = \"x\"\n}\n"
	}
	cases := map[string]struct {
		root, manifest string
		summary        string
		detail         string
		rng            diag.Range
	}{
		"NotInstalled": {root: call("cloudposse/label/null", "0.25.0"), summary: "Module not installed", detail: "the server never downloads modules",
			rng: diag.Range{Filename: "main.tf", Line: 2, Column: 12}},
		"SourceChanged": {root: call("cloudposse/label/aws", "0.25.0"), manifest: labelManifest, summary: "Module source has changed",
			detail: "The source address was changed since this module was installed.", rng: diag.Range{Filename: "main.tf", Line: 2, Column: 12}},
		"VersionChanged": {root: call("cloudposse/label/null", ">= 1.0"), manifest: labelManifest, summary: "Module version requirements have changed",
			detail: `The installed version 0.25.0 does not match the version constraint ">= 1.0".`, rng: diag.Range{Filename: "main.tf", Line: 2, Column: 12}},
		"BadManifest": {root: call("cloudposse/label/null", "0.25.0"), manifest: "{", summary: "Invalid modules manifest",
			detail: "cannot be read", rng: diag.Range{Filename: "main.tf", Line: 2, Column: 12}},
		"VersionOnGit": {root: call("git::https://example.com/x.git", "1.0"), summary: "Invalid registry module source address",
			detail: "applies only to registry modules", rng: diag.Range{Filename: "main.tf", Line: 2, Column: 12}},
		"RelativeWithoutDot": {root: call("modules/label", ""), summary: "Invalid module source address",
			detail: `use "./modules/label" instead`, rng: diag.Range{Filename: "main.tf", Line: 2, Column: 12}},
		"BadConstraint": {root: call("cloudposse/label/null", "~> x"), manifest: labelManifest, summary: "Invalid version constraint",
			detail: "correct version constraint syntax", rng: diag.Range{Filename: "main.tf", Line: 3, Column: 13}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			files := installedFiles(tc.root, tc.manifest)
			if tc.manifest == "" {
				delete(files, ".terraform/modules/modules.json")
			}
			_, ds := Parse(context.Background(), files, Options{})
			if len(ds) == 0 {
				t.Fatal("Parse succeeded, want an error")
			}
			d := ds[0]
			if d.Summary != tc.summary || !strings.Contains(d.Detail, tc.detail) {
				t.Errorf("diagnostic = %q: %q, want %q with %q", d.Summary, d.Detail, tc.summary, tc.detail)
			}
			if diff := cmp.Diff(tc.rng, d.Range); diff != "" {
				t.Errorf("range: -want +got:\n%s", diff)
			}
		})
	}
}

func TestModuleCalls(t *testing.T) {
	files := map[string][]byte{"main.tf": []byte("module \"b\" {\n  source = \"github.com/o/r//m?ref=v1\"\n}\n" +
		"module \"a\" {\n  source = \"o/n/p\"\n  version = \"~> 1.2\"\n}\nmodule \"bad\" {\n  source = \"nope\"\n}\n")}
	var got []string
	for _, c := range ModuleCalls(files, ".") {
		got = append(got, c.Name+" "+c.Source.String()+" "+c.Version)
	}
	want := []string{"a registry.terraform.io/o/n/p ~> 1.2", "b git::https://github.com/o/r.git//m?ref=v1 "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ModuleCalls: -want +got:\n%s", diff)
	}
}
