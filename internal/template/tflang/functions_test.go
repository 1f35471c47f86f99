package tflang

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/template"
)

// consoleFiles are the files the function cases read, sent to cairn and written for terraform.
var consoleFiles = map[string]string{
	"a.txt":          "hello\n",
	"sub/b.txt":      "b",
	"sub/deep/c.txt": "c",
	"greet.tpl":      "%{ for n in names }Hi ${upper(n)}! %{ endfor }${base64encode(x)}",
	"loop.tpl":       `${templatefile("a.txt", {})}`,
}

// functionCases are expressions whose value must be terraform's; each is compared with
// `terraform console` when terraform is on PATH, and with the value written here always.
var functionCases = []struct{ expr, want string }{
	// issue 12, item 1: values that were silently wrong
	{`coalesce("", "x")`, `"x"`},
	{`replace("a-1-b-22", "/[0-9]+/", "N")`, `"a-N-b-N"`},
	{`replace("a.b.c", ".", "/")`, `"a/b/c"`},
	{`index(["a", "b", "c"], "c")`, `2`},
	// item 4
	{`lookup({a = "1"}, "b", null)`, `null`},
	{`lookup({a = "1"}, "a", null)`, `"1"`},
	// item 6: functions that were missing
	{`cidrsubnet("10.0.0.0/16", 8, 2)`, `"10.0.2.0/24"`},
	{`cidrhost("10.0.0.0/24", 5)`, `"10.0.0.5"`},
	{`cidrsubnets("10.0.0.0/16", 4, 4, 8)`, `["10.0.0.0/20","10.0.16.0/20","10.0.32.0/24"]`},
	{`basename("a/b/c.txt")`, `"c.txt"`},
	{`dirname("a/b/c.txt")`, `"a/b"`},
	{`base64encode("héllo")`, `"aMOpbGxv"`},
	{`base64decode("aMOpbGxv")`, `"héllo"`},
	{`alltrue([true, true])`, `true`},
	{`anytrue([false])`, `false`},
	{`one(["x"])`, `"x"`},
	{`one([])`, `null`},
	{`md5("x")`, `"9dd4e461268c8034f5c8564e155c67a6"`},
	{`sha256("x")`, `"2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"`},
	{`startswith("hello", "he")`, `true`},
	{`endswith("hello", "lo")`, `true`},
	{`strcontains("hello", "ll")`, `true`},
	{`yamldecode("a: [1, 2]")`, `{"a":[1,2]}`},
	{`yamlencode({a = 1})`, `"\"a\": 1\n"`},
	{`length("héllo")`, `5`},
	{`sum([1, 2, 3.5])`, `6.5`},
	{`transpose({a = ["x", "y"]})`, `{"x":["a"],"y":["a"]}`},
	{`matchkeys(["a", "b"], ["x", "y"], ["y"])`, `["b"]`},
	{`urlencode("a b&c")`, `"a+b%26c"`},
	{`uuidv5("dns", "example.com")`, `"cfbff0d1-9375-5685-968c-48ce8b15ae17"`},
	{`formatdate("YYYY-MM-DD", "2024-02-03T04:05:06Z")`, `"2024-02-03"`},
	{`timecmp("2024-01-01T00:00:00Z", "2023-01-01T00:00:00Z")`, `1`},
	{`textencodebase64("hi", "UTF-16LE")`, `"aABpAA=="`},
	{`core::upper("a")`, `"A"`},
	{`can(regex("^[a-z]+$", "abc"))`, `true`},
	{`try(tonumber("x"), 7)`, `7`},
	{`tomap({a = 1, b = "x"})`, `{"a":"1","b":"x"}`},
	{`issensitive(sensitive("x"))`, `true`},
	{`nonsensitive(sensitive("x"))`, `"x"`},
	// item 2: the filesystem functions read the configuration's files
	{`file("a.txt")`, `"hello\n"`},
	{`file("./sub/../a.txt")`, `"hello\n"`},
	{`filebase64("sub/b.txt")`, `"Yg=="`},
	{`fileexists("a.txt")`, `true`},
	{`fileexists("nope.txt")`, `false`},
	{`fileset(".", "**/*.txt")`, `["a.txt","sub/b.txt","sub/deep/c.txt"]`},
	{`fileset("sub", "*.txt")`, `["b.txt"]`},
	{`fileset("nope", "*")`, `[]`},
	{`filemd5("a.txt")`, `"b1946ac92492d2347c6235b4d2611184"`},
	{`filesha1("a.txt")`, `"f572d396fae9206628714fb2ce00f72e94f2258f"`},
	{`filesha256("a.txt")`, `"5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"`},
	{`filesha512("sub/b.txt")`, `"5267768822ee624d48fce15ec5ca79cbd602cb7f4c2157a516556991f22ef8c7b5ef7b18d1ff41c59370efb0858651d44a936c11b7b144c48fe04df3c6a3e8da"`},
	{`filebase64sha256("a.txt")`, `"WJG1tSLV3whtD/CxEPvZ0hu0/HFjrzTQgoai6Eb2vgM="`},
	{`filebase64sha512("sub/b.txt")`, `"Umd2iCLuYk1I/OFexcp5y9YCy39MIVelFlVpkfIu+Me173sY0f9BxZNw77CFhlHUSpNsEbexRMSP4E3zxqPo2g=="`},
	{`templatefile("greet.tpl", {names = ["a", "b"], x = "y"})`, `"Hi A! Hi B! eQ=="`},
}

// consoleValues evaluates exprs with terraform console in a directory holding consoleFiles,
// each as JSON, or skips when there is no terraform.
func consoleValues(t *testing.T, exprs []string) []string {
	t.Helper()
	bin := terraformBin(t)
	dir := t.TempDir()
	writeTree(t, dir, consoleFiles)
	return terraformConsole(t, bin, dir, exprs)
}

// terraformBin is the terraform CLI on PATH; the test is skipped when there is none.
func terraformBin(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("terraform CLI not found on PATH")
	}
	return bin
}

// writeTree writes files (slash-separated name to content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// terraformConsole evaluates exprs with terraform console (bin) in dir, each as JSON.
func terraformConsole(t *testing.T, bin, dir string, exprs []string) []string {
	t.Helper()
	// one expression: console prints only the last of several lines
	parts := make([]string, len(exprs))
	for i, x := range exprs {
		parts[i] = "jsonencode(" + x + ")"
	}
	cmd := exec.Command(bin, "console")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE=/dev/null", "CHECKPOINT_DISABLE=1")
	cmd.Stdin = strings.NewReader("jsonencode([" + strings.Join(parts, ", ") + "])\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("terraform console: %v\n%s%s", err, out, stderr.String())
	}
	// console prints the JSON text as an HCL string literal
	x, ds := hclsyntax.ParseExpression(bytes.TrimSpace(out), "console", hcl.InitialPos)
	if ds.HasErrors() {
		t.Fatalf("console output %q: %v", out, ds)
	}
	v, ds := x.Value(nil)
	if ds.HasErrors() || v.Type() != cty.String {
		t.Fatalf("console output %q: %v", out, ds)
	}
	var lines []string
	if err := json.Unmarshal([]byte(v.AsString()), &lines); err != nil || len(lines) != len(exprs) {
		t.Fatalf("console output %q: %v", out, err)
	}
	return lines
}

// cairnValues evaluates exprs as outputs of a configuration holding consoleFiles, as JSON.
func cairnValues(t *testing.T, exprs []string) []string {
	t.Helper()
	src := ""
	for i, x := range exprs {
		src += "output \"o" + strings.Repeat("x", i) + "\" {\n  value = jsonencode(" + x + ")\n}\n"
	}
	fs := files("main.tf", src)
	for name, text := range consoleFiles {
		fs[name] = []byte(text)
	}
	st := mustParse(t, fs, Options{})
	out := make([]string, len(exprs))
	for _, o := range st.Outputs {
		i := len(o.Name) - 1
		v, ds := o.Value.Eval(scope{})
		if ds.HasErrors() {
			t.Errorf("%s: %v", exprs[i], ds.Err())
			continue
		}
		out[i] = v.AsString()
	}
	return out
}

// TestTerraformFunctions: cairn's functions are terraform's, values and all (issue 12 items 1,
// 2, 4, 6), compared with the expected value and with terraform console.
func TestTerraformFunctions(t *testing.T) {
	exprs := make([]string, len(functionCases))
	for i, c := range functionCases {
		exprs[i] = c.expr
	}
	got := cairnValues(t, exprs)
	for i, c := range functionCases {
		if got[i] != c.want {
			t.Errorf("%s = %s, want %s", c.expr, got[i], c.want)
		}
	}
	tf := consoleValues(t, exprs)
	for i, c := range functionCases {
		if got[i] != tf[i] {
			t.Errorf("%s = %s in cairn, %s in terraform", c.expr, got[i], tf[i])
		}
	}
}

// TestFileFunctionsStayInTheConfiguration: the filesystem functions read only the files sent
// with the configuration, never the server's disk, with terraform's messages.
func TestFileFunctionsStayInTheConfiguration(t *testing.T) {
	cases := map[string]struct{ expr, detail string }{
		"Absolute":       {`file("/etc/passwd")`, `no file exists at "/etc/passwd"`},
		"Escaping":       {`file("../../../../etc/passwd")`, `no file exists at "../../../../etc/passwd"`},
		"Home":           {`file("~/.bashrc")`, `no file exists at "~/.bashrc"`},
		"Hash":           {`filemd5("/etc/passwd")`, "open /etc/passwd: no such file or directory"},
		"Template":       {`templatefile("/etc/passwd", {})`, `no file exists at "/etc/passwd"`},
		"Directory":      {`fileexists("sub")`, `"sub" is a directory, not a file`},
		"Recursion":      {`templatefile("loop.tpl", {})`, "cannot recursively call templatefile from inside another template function"},
		"MissingVar":     {`templatefile("greet.tpl", {names = []})`, `vars map does not contain key "x"`},
		"VarsNotMap":     {`templatefile("a.txt", 1)`, "invalid vars value: must be a map"},
		"StringNoFSFunc": {`templatestring(local.t, {})`, "cannot use filesystem access functions like file in templatestring templates"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fs := files("main.tf", "locals {\n  t = \"$${file(\\\"a.txt\\\")}\"\n}\noutput \"o\" {\n  value = "+tc.expr+"\n}\n")
			for n, text := range consoleFiles {
				fs[n] = []byte(text)
			}
			st := mustParse(t, fs, Options{})
			_, ds := st.Outputs[0].Value.Eval(scope{})
			if !ds.HasErrors() || !strings.Contains(ds.Err().Error(), tc.detail) {
				t.Errorf("%s: %v, want an error containing %q", tc.expr, ds.Err(), tc.detail)
			}
		})
	}
}

// TestFilePathsFromRootModule: relative paths resolve against the root module's directory
// (terraform's working directory), path.module names a module's own, and an absolute path
// under the directory the configuration was read from names a sent file.
func TestFilePathsFromRootModule(t *testing.T) {
	fs := files(
		"infra/main.tf", `module "m" {
  source = "./mod"
}
output "root"   { value = file("data.txt") }
output "mod"    { value = module.m.v }
output "abs"    { value = file("${abspath(path.module)}/data.txt") }
output "cwd"    { value = abspath(".") }
output "shared" { value = file("../shared.txt") }
`,
		"infra/data.txt", "root data",
		"infra/mod/main.tf", `output "v" { value = "${path.module}|${file("${path.module}/m.txt")}" }`,
		"infra/mod/m.txt", "module data",
		"shared.txt", "outside the root module, sent",
	)
	st := mustParse(t, fs, Options{Dir: "infra", AbsDir: "/home/u/proj/infra"})
	want := map[string]string{"root": "root data", "mod": "mod|module data", "abs": "root data",
		"cwd": "/home/u/proj/infra", "shared": "outside the root module, sent"}
	for _, o := range st.Outputs {
		if got := eval(t, o.Value, scope{}); got.AsString() != want[o.Name] {
			t.Errorf("output %s = %q, want %q", o.Name, got.AsString(), want[o.Name])
		}
	}
}

// planningScope is a scope of a preview.
type planningScope struct{ scope }

func (planningScope) Planning() bool { return true }

// TestImpureFunctionsUnknownWhenPlanning: timestamp, uuid and bcrypt are "known after apply"
// in a preview, as in terraform's plan, and evaluated when applied.
func TestImpureFunctionsUnknownWhenPlanning(t *testing.T) {
	for _, expr := range []string{`timestamp()`, `uuid()`, `bcrypt("x", 4)`, `core::uuid()`, `length(uuid())`} {
		st := mustParse(t, files("main.tf", "output \"o\" {\n  value = "+expr+"\n}\n"), Options{})
		if v := eval(t, st.Outputs[0].Value, planningScope{}); v.IsKnown() {
			t.Errorf("%s in a preview = %#v, want unknown", expr, v)
		}
		var applied template.Scope = scope{}
		if v := eval(t, st.Outputs[0].Value, applied); !v.IsWhollyKnown() {
			t.Errorf("%s when applied = %#v, want known", expr, v)
		}
	}
}

// TestFunctionTableBudget: a function called through templatefile is metered as one called
// directly.
func TestFunctionTableBudget(t *testing.T) {
	fs := files("main.tf", `output "o" { value = templatefile("big.tpl", {}) }`,
		"big.tpl", `%{ for i in range(100000) }${i}%{ endfor }`)
	st := mustParse(t, fs, Options{})
	_, ds := st.Outputs[0].Value.Eval(ctxScope{budget.WithLimits(context.Background(), budget.Limits{Elements: 10_000})})
	if !ds.HasErrors() || limitDiag(ds) == nil {
		t.Fatalf("a template iterating past the limits: %v, want the limit's diagnostic", ds.Err())
	}
}

// TestFileFunctionsOnDirectory: a path naming a directory gets terraform 1.11's diagnostic
// (summary and detail), the path as terraform shows it (cleaned, relative to the root module)
// rather than the key of the sent files.
func TestFileFunctionsOnDirectory(t *testing.T) {
	cases := []struct{ expr, summary, detail string }{
		{`fileexists("g")`, "Error in function call", `Call to function "fileexists" failed: "g" is a directory, not a file.`},
		{`fileexists("./g/")`, "Error in function call", `Call to function "fileexists" failed: "g" is a directory, not a file.`},
		{`fileexists("/work/cfg/g")`, "Error in function call", `Call to function "fileexists" failed: "/work/cfg/g" is a directory, not a file.`},
		{`fileexists(sensitive("g"))`, "Error in function call", `Call to function "fileexists" failed: (sensitive value) is a directory, not a file.`},
		{`templatefile("g", {})`, "Invalid function argument", `Invalid value for "path" parameter: failed to read file: read g: is a directory.`},
		{`templatefile("./g/", {})`, "Invalid function argument", `Invalid value for "path" parameter: failed to read file: read g: is a directory.`},
		{`file("g")`, "Invalid function argument", `Invalid value for "path" parameter: failed to read file: read g: is a directory.`},
		{`filebase64("g")`, "Invalid function argument", `Invalid value for "path" parameter: failed to read file: read g: is a directory.`},
		{`filemd5("g")`, "Error in function call", `Call to function "filemd5" failed: read g: is a directory.`},
	}
	for _, tc := range cases {
		fs := files("cfg/main.tf", "output \"o\" {\n  value = "+tc.expr+"\n}\n", "cfg/g/x", "x")
		st := mustParse(t, fs, Options{Dir: "cfg", AbsDir: "/work/cfg"})
		_, ds := st.Outputs[0].Value.Eval(scope{})
		if len(ds) != 1 || ds[0].Summary != tc.summary || strings.SplitN(ds[0].Detail, "\n\n", 2)[0] != tc.detail {
			t.Errorf("%s: %v\nwant %s: %s", tc.expr, ds.Err(), tc.summary, tc.detail)
		}
	}
}

// TestPathexpandClientHome: with the client's home known (the CLI's in-process server, which
// runs as the user), pathexpand expands "~" as terraform does.
func TestPathexpandClientHome(t *testing.T) {
	t.Setenv("HOME", "/home/ann")
	for expr, want := range map[string]string{
		`pathexpand("~/x")`:     "/home/ann/x",
		`core::pathexpand("~")`: "/home/ann",
		`pathexpand("~/../y/")`: "/home/y",
		`pathexpand("a/~/b")`:   "a/~/b",
	} {
		st := mustParse(t, files("main.tf", "output \"o\" {\n  value = "+expr+"\n}\n"), Options{ClientHome: true})
		v, ds := st.Outputs[0].Value.Eval(scope{})
		if ds.HasErrors() || v.AsString() != want {
			t.Errorf("%s = %#v %v, want %q", expr, v, ds.Err(), want)
		}
	}
	st := mustParse(t, files("main.tf", "output \"o\" {\n  value = pathexpand(\"~bob/x\")\n}\n"), Options{ClientHome: true})
	if _, ds := st.Outputs[0].Value.Eval(scope{}); !ds.HasErrors() || !strings.Contains(ds.Err().Error(), "cannot expand user-specific home dir") {
		t.Errorf(`pathexpand("~bob/x"): %v, want terraform's error`, ds.Err())
	}
}
