package tflang

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
)

const importsConfig = `variable "ts" {
  default = "2024-01-02T03:04:05Z"
}
locals {
  stamps = { a = "2023-05-06T07:08:09Z", b = "2022-01-01T00:00:00Z" }
}
resource "time_static" "t" {}
import {
  to = time_static.t
  id = var.ts
}
resource "time_static" "m" {
  for_each = local.stamps
}
import {
  for_each = local.stamps
  to       = time_static.m[each.key]
  id       = each.value
}
resource "time_static" "src" {}
resource "time_static" "c" {
  count = 2
}
import {
  for_each = ["x", "y"]
  to       = time_static.c[each.key]
  id       = "${time_static.src.id}-${each.value}"
}
module "k" {
  source = "./mod"
  count  = 1
}
import {
  to = module.k[0].time_static.x
  id = upper("abc")
}
`

// TestImports: import blocks give one template.Import per target instance with absolute
// addresses; for_each over a map or a list binds each.key and each.value in to and id; an id
// that references a resource makes the target depend on it and is known only once it is.
func TestImports(t *testing.T) {
	st := mustParse(t, files("main.tf", importsConfig, "mod/main.tf", `resource "time_static" "x" {}`), Options{})
	got := map[string]string{}
	for _, im := range st.Imports {
		v, ds := im.ID.Eval(scope{"time_static.src": cty.ObjectVal(map[string]cty.Value{"id": cty.StringVal("S")})})
		if ds.HasErrors() {
			t.Fatalf("%s: id: %v", im.To, ds.Err())
		}
		got[im.To] = v.AsString()
	}
	want := map[string]string{
		"time_static.t":             "2024-01-02T03:04:05Z",
		`time_static.m["a"]`:        "2023-05-06T07:08:09Z",
		`time_static.m["b"]`:        "2022-01-01T00:00:00Z",
		"time_static.c[0]":          "S-x",
		"time_static.c[1]":          "S-y",
		"module.k[0].time_static.x": "ABC",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("imports and their ids: -want +got:\n%s", diff)
	}
	if deps := st.Resource("time_static.c[1]").DependsOn; !contains(deps, "time_static.src") {
		t.Errorf("time_static.c[1] depends on %v; its import id references time_static.src", deps)
	}
	if deps := st.Resource("time_static.t").DependsOn; len(deps) != 0 {
		t.Errorf("time_static.t depends on %v; its id references only a variable", deps)
	}
	v, ds := st.Import("time_static.c[0]").ID.Eval(scope{})
	if ds.HasErrors() || v.IsKnown() {
		t.Errorf("an id from a resource not applied yet: %#v %v, want unknown and no error (the engine refuses it when planning)", v, ds.Err())
	}
	if im := st.Import("time_static.t"); im.Range != rng("main.tf", 8, 1) || im.IDRange != rng("main.tf", 10, 8) {
		t.Errorf("ranges %v %v, want main.tf:8:1 and main.tf:10:8", im.Range, im.IDRange)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestImportsJSON: a .tf.json import block names its target in a string.
func TestImportsJSON(t *testing.T) {
	st := mustParse(t, files("main.tf.json", `{"resource": {"time_static": {"t": {}}}, "import": [{"to": "time_static.t", "id": "2024-01-02T03:04:05Z"}]}`), Options{})
	if len(st.Imports) != 1 || st.Imports[0].To != "time_static.t" {
		t.Fatalf("imports %+v, want one to time_static.t", st.Imports)
	}
}

// TestImportsValidateUnknown: while validating, an import for_each from a variable without a
// value is not known yet, and is no error (terraform validate passes it too).
func TestImportsValidateUnknown(t *testing.T) {
	src := `variable "ids" {}
resource "time_static" "m" {
  for_each = toset(["a"])
}
import {
  for_each = var.ids
  to       = time_static.m[each.key]
  id       = each.value
}
`
	if _, ds := Parse(context.Background(), files("main.tf", src), Options{Validate: true}); ds.HasErrors() {
		t.Fatalf("validate: %v", ds.Err())
	}
}

// TestImportErrors: the import blocks terraform 1.11 refuses, refused with its summary at the
// place it points to.
func TestImportErrors(t *testing.T) {
	cases := map[string]struct {
		reason  string
		files   map[string]string
		summary string
		detail  string // a part of the detail
		rng     diag.Range
	}{
		"MissingTarget": {
			reason:  "The target must be declared: cairn generates no configuration.",
			files:   map[string]string{"main.tf": "resource \"time_static\" \"t\" {}\nimport {\n  to = time_static.nope\n  id = \"x\"\n}\n"},
			summary: "Configuration for import target does not exist", detail: "import target time_static.nope does not exist",
			rng: rng("main.tf", 3, 8),
		},
		"MissingInstance": {
			reason:  "A key the resource's for_each does not have is no target.",
			files:   map[string]string{"main.tf": "resource \"time_static\" \"t\" {\n  for_each = toset([\"a\"])\n}\nimport {\n  to = time_static.t[\"b\"]\n  id = \"x\"\n}\n"},
			summary: "Configuration for import target does not exist", detail: `time_static.t["b"]`,
			rng: rng("main.tf", 5, 8),
		},
		"Duplicate": {
			reason:  "Two import blocks for one instance.",
			files:   map[string]string{"main.tf": "resource \"time_static\" \"t\" {}\nimport {\n  to = time_static.t\n  id = \"a\"\n}\nimport {\n  to = time_static.t\n  id = \"b\"\n}\n"},
			summary: `Duplicate import configuration for "time_static.t"`, detail: "already declared at main.tf:2,1-7",
			rng: rng("main.tf", 7, 8),
		},
		"DataSource": {
			reason:  "Only managed resources are imported.",
			files:   map[string]string{"main.tf": "data \"time_static\" \"t\" {}\nimport {\n  to = data.time_static.t\n  id = \"a\"\n}\n"},
			summary: "Invalid import address", detail: "Only managed resources can be imported.",
			rng: rng("main.tf", 3, 3),
		},
		"ChildModule": {
			reason: "Import blocks belong to the root module.",
			files: map[string]string{"main.tf": "module \"m\" {\n  source = \"./mod\"\n}\n",
				"mod/main.tf": "resource \"time_static\" \"x\" {}\nimport {\n  to = time_static.x\n  id = \"a\"\n}\n"},
			summary: "Invalid import configuration", detail: `An import block was detected in "module.m".`,
			rng: rng("mod/main.tf", 2, 1),
		},
		"KeyNotForEach": {
			reason:  "A string key on a resource without for_each.",
			files:   map[string]string{"main.tf": "resource \"time_static\" \"t\" {}\nimport {\n  to = time_static.t[\"x\"]\n  id = \"a\"\n}\n"},
			summary: "Invalid import 'to' expression", detail: "The target resource does not use for_each.",
			rng: rng("main.tf", 3, 8),
		},
		"NoKeyWithCount": {
			reason:  "A counted resource needs its index.",
			files:   map[string]string{"main.tf": "resource \"time_static\" \"t\" {\n  count = 1\n}\nimport {\n  to = time_static.t\n  id = \"a\"\n}\n"},
			summary: "Invalid import 'to' expression", detail: "The target resource is using count.",
			rng: rng("main.tf", 5, 8),
		},
		"SelfReference": {
			reason:  "The id cannot come from the object being imported.",
			files:   map[string]string{"main.tf": "resource \"time_static\" \"t\" {}\nimport {\n  to = time_static.t\n  id = time_static.t.id\n}\n"},
			summary: "Invalid import id argument", detail: "cannot reference the resource being imported",
			rng: rng("main.tf", 4, 8),
		},
		"EmptyID": {
			reason:  "An id known to be empty.",
			files:   map[string]string{"main.tf": "resource \"time_static\" \"t\" {}\nimport {\n  to = time_static.t\n  id = \"\"\n}\n"},
			summary: "Invalid import id argument", detail: "evaluates to an empty string",
			rng: rng("main.tf", 4, 8),
		},
		"NullID": {
			reason:  "An id known to be null.",
			files:   map[string]string{"main.tf": "resource \"time_static\" \"t\" {}\nimport {\n  to = time_static.t\n  id = null\n}\n"},
			summary: "Invalid import id argument", detail: "cannot be null",
			rng: rng("main.tf", 4, 8),
		},
		"NoID": {
			reason:  "terraform 1.11 requires id.",
			files:   map[string]string{"main.tf": "resource \"time_static\" \"t\" {}\nimport {\n  to = time_static.t\n}\n"},
			summary: "Missing required argument", detail: `"id"`,
			rng: rng("main.tf", 2, 8),
		},
		"ProviderInModule": {
			reason: "A module's resources get their provider from the module call.",
			files: map[string]string{"main.tf": "module \"m\" {\n  source = \"./mod\"\n}\nimport {\n  to       = module.m.time_static.x\n  id       = \"a\"\n  provider = time\n}\n",
				"mod/main.tf": "resource \"time_static\" \"x\" {}\n"},
			summary: "Invalid import provider argument", detail: "providers argument within the module block",
			rng: rng("main.tf", 7, 3),
		},
		"OtherVariableInKey": {
			reason:  "Only each.key and each.value can make a target's key.",
			files:   map[string]string{"main.tf": "locals {\n  k = \"a\"\n}\nresource \"time_static\" \"t\" {\n  for_each = toset([\"a\"])\n}\nimport {\n  for_each = toset([\"a\"])\n  to       = time_static.t[local.k]\n  id       = each.key\n}\n"},
			summary: "Unknown variable", detail: `Only "each.key" and "each.value" can be used`,
			rng: rng("main.tf", 9, 28),
		},
		"UnknownForEach": {
			reason:  "An import for_each must be known when planning.",
			files:   map[string]string{"main.tf": "resource \"time_static\" \"a\" {}\nresource \"time_static\" \"t\" {\n  for_each = toset([\"a\"])\n}\nimport {\n  for_each = toset([time_static.a.id])\n  to       = time_static.t[each.key]\n  id       = each.key\n}\n"},
			summary: "Invalid for_each argument", detail: "cannot be determined until apply",
			rng: rng("main.tf", 6, 14),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fs := map[string][]byte{}
			for k, v := range tc.files {
				fs[k] = []byte(v)
			}
			_, ds := Parse(context.Background(), fs, Options{})
			for _, d := range ds {
				if d.Severity == diag.Error && d.Summary == tc.summary && strings.Contains(d.Detail, tc.detail) {
					if d.Range != tc.rng {
						t.Errorf("%s\n%s at %v, want %v", tc.reason, d.Summary, d.Range, tc.rng)
					}
					return
				}
			}
			t.Errorf("%s\nParse: %v; want %q (detail with %q)", tc.reason, ds.Err(), tc.summary, tc.detail)
		})
	}
}
