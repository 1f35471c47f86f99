package pulumiyaml

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/config"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/value"
	psig "github.com/pulumi/pulumi/sdk/v3/go/common/resource/sig"
)

// outputsOf parses a one-file project (program in Pulumi.yaml, plus extra files) and returns
// its outputs evaluated with no resources.
func outputsOf(t *testing.T, ctx context.Context, program string, extra map[string]string, overrides map[string]string) (map[string]cty.Value, diag.Diagnostics) {
	t.Helper()
	fs := map[string]string{"Pulumi.yaml": "name: proj\nruntime: yaml\n" + program}
	for k, v := range extra {
		fs[k] = v
	}
	st, ds := Parse(ctx, fs, "dev", overrides)
	if ds.HasErrors() {
		return nil, ds
	}
	out := map[string]cty.Value{}
	for _, o := range st.Outputs {
		v, d := o.Value.Eval(scope{})
		ds = append(ds, d...)
		out[o.Name] = v
	}
	return out, ds
}

func mustOutputs(t *testing.T, program string, extra map[string]string) map[string]cty.Value {
	t.Helper()
	out, ds := outputsOf(t, context.Background(), program, extra, nil)
	if ds.HasErrors() {
		t.Fatalf("%v", ds)
	}
	return out
}

func TestValueBuiltins(t *testing.T) {
	out := mustOutputs(t, `outputs:
  b64: {fn::toBase64: hello world}
  text: {fn::fromBase64: Z29vZGJ5ZSB3b3JsZA==}
  sha: {fn::sha1: hello world}
  graphemes: {fn::length: "👨‍👩‍👧‍👦-family-👶"}
  items: {fn::length: [a, b, c]}
  keys: {fn::length: {a: 1, b: 2}}
  one: {fn::singleOrNone: [x]}
  none: [{fn::singleOrNone: []}]
  open: {fn::unsecret: {fn::secret: s}}
  map:
    "Some $${common}": "$${v}"
`, nil)
	for name, want := range map[string]cty.Value{
		"b64":       cty.StringVal("aGVsbG8gd29ybGQ="),
		"text":      cty.StringVal("goodbye world"),
		"sha":       cty.StringVal("2aae6c35c94fcfb415dbe95f408b9ce91ee846ed"),
		"graphemes": cty.NumberIntVal(10),
		"items":     cty.NumberIntVal(3),
		"keys":      cty.NumberIntVal(2),
		"one":       cty.StringVal("x"),
		"none":      cty.TupleVal([]cty.Value{cty.NullVal(cty.DynamicPseudoType)}),
		"open":      cty.StringVal("s"),
		"map":       cty.ObjectVal(map[string]cty.Value{"Some ${common}": cty.StringVal("${v}")}),
	} {
		if got := out[name]; !got.RawEquals(want) {
			t.Errorf("%s = %#v, want %#v", name, got, want)
		}
	}
}

func TestValueBuiltinErrorsHideTheValue(t *testing.T) {
	for name, c := range map[string]struct{ program, want string }{
		"notBase64":  {"outputs:\n  o: {fn::fromBase64: {fn::secret: 'hunter2!'}}\n", "fn::frombase64: the argument is not base64"},
		"notUTF8":    {"outputs:\n  o: {fn::fromBase64: '//79'}\n", "not UTF-8 text"},
		"twoOrNone":  {"outputs:\n  o: {fn::singleOrNone: [a, b]}\n", "expects a list of 0 or 1 elements, got 2"},
		"lengthBool": {"outputs:\n  o: {fn::length: true}\n", "expects a list, an object or a string, got a boolean"},
		"sha1List":   {"outputs:\n  o: {fn::sha1: [a]}\n", "expects a string, got a list"},
	} {
		t.Run(name, func(t *testing.T) {
			_, ds := outputsOf(t, context.Background(), c.program, nil, nil)
			d := find(ds, c.want)
			if d == nil {
				t.Fatalf("want %q, got %v", c.want, ds)
			}
			if strings.Contains(ds.Error(), "hunter2") {
				t.Errorf("a secret in a diagnostic: %v", ds)
			}
			if d.Range.Filename != "Pulumi.yaml" || d.Range.Line != 4 || !strings.HasPrefix(d.Path, "outputs.o.fn::") {
				t.Errorf("at %v %q, want Pulumi.yaml:4 outputs.o.fn::...", d.Range, d.Path)
			}
		})
	}
}

// The hashes are those `pulumi up` records for the same contents (the conformance test
// l2-resource-asset-archive): a file asset of "text", a directory holding test.txt.
const (
	hashOfText   = "982d9e3eb996f559e633f4d194def3761d909f5a3b647d1a851fead67c32c9d1"
	hashOfFolder = "25df47ed6b3c8e07479e5d9c908eff93d624ec693b6aa7559a9bcb084db70774"
)

func TestFilesAndAssetsFromTheProject(t *testing.T) {
	extra := map[string]string{"test.txt": "text", "folder/test.txt": "data in a folder"}
	out := mustOutputs(t, `outputs:
  content: {fn::readFile: test.txt}
  b64: {fn::filebase64: ./test.txt}
  sha: {fn::filebase64sha256: folder/../test.txt}
  asset: {fn::fileAsset: test.txt}
  text: {fn::stringAsset: file contents}
  remote: {fn::remoteAsset: "https://example.com/a.txt"}
  dir: {fn::fileArchive: folder}
  both:
    fn::assetArchive:
      file: {fn::fileAsset: test.txt}
      folder: {fn::fileArchive: folder}
`, extra)
	asset := func(attrs map[string]string) cty.Value { return assetVal(psig.AssetSig, attrs) }
	for name, want := range map[string]cty.Value{
		"content": cty.StringVal("text"),
		"b64":     cty.StringVal("dGV4dA=="),
		"sha":     cty.StringVal("mC2ePrmW9VnmM/TRlN7zdh2Qn1o7ZH0ahR/q1nwyydE="),
		"asset":   asset(map[string]string{"path": "test.txt", "hash": hashOfText}),
		"text":    asset(map[string]string{"text": "file contents", "hash": "7bb6f9f7a47a63e684925af3608c059edcc371eb81188c48c9714896fb1091fd"}),
		"remote":  asset(map[string]string{"uri": "https://example.com/a.txt"}),
		"dir":     assetVal(psig.ArchiveSig, map[string]string{"path": "folder", "hash": hashOfFolder}),
	} {
		if got := out[name]; !got.RawEquals(want) {
			t.Errorf("%s = %#v, want %#v", name, got, want)
		}
	}
	both := out["both"]
	if !isAssetOrArchive(both) || both.GetAttr("assets").LengthInt() != 2 || both.GetAttr("hash").AsString() == "" {
		t.Errorf("assetArchive = %#v", both)
	}

	// The program's directory (Pulumi's `main:`) is where relative paths start.
	src := &sources{files: map[string]string{"test.txt": "text"}, dir: "subdir", hashes: map[string]string{}}
	if rel, ok := src.resolve("../test.txt"); !ok || rel != "test.txt" {
		t.Errorf("resolve ../test.txt from subdir = %q %v", rel, ok)
	}
}

func TestFilesOutsideTheProjectAreRefused(t *testing.T) {
	ctx := WithRootDirectory(context.Background(), "/home/u/proj")
	for name, c := range map[string]struct{ program, want string }{
		"parent":   {"outputs:\n  o: {fn::readFile: ../secrets.txt}\n", "../secrets.txt is outside the project directory"},
		"absolute": {"outputs:\n  o: {fn::readFile: /etc/passwd}\n", "/etc/passwd is outside the project directory"},
		"missing":  {"outputs:\n  o: {fn::fileAsset: nope.txt}\n", "no file nope.txt in the project"},
		"notArch":  {"outputs:\n  o: {fn::fileArchive: a.txt}\n", "a.txt is neither an archive"},
		"mixed":    {"outputs:\n  o: {fn::assetArchive: {a: 1}}\n", "a is not an asset or archive"},
	} {
		t.Run(name, func(t *testing.T) {
			_, ds := outputsOf(t, ctx, c.program, map[string]string{"a.txt": "x"}, nil)
			if find(ds, c.want) == nil {
				t.Fatalf("want %q, got %v", c.want, ds)
			}
		})
	}
	out, ds := outputsOf(t, ctx, "outputs:\n  o: {fn::readFile: /home/u/proj/a.txt}\n", map[string]string{"a.txt": "x"}, nil)
	if ds.HasErrors() || !out["o"].RawEquals(cty.StringVal("x")) {
		t.Errorf("an absolute path inside the project: %#v %v", out["o"], ds)
	}
}

func TestPulumiDirectories(t *testing.T) {
	program := "outputs:\n  cwd: ${pulumi.cwd}\n  root: ${pulumi.rootDirectory}\n  org: ${pulumi.organization}\n"
	out, ds := outputsOf(t, WithRootDirectory(context.Background(), "/home/u/proj"), program, nil, nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	for name, want := range map[string]string{"cwd": "/home/u/proj", "root": "/home/u/proj", "org": "organization"} {
		if got := out[name]; !got.RawEquals(cty.StringVal(want)) {
			t.Errorf("%s = %#v, want %q", name, got, want)
		}
	}
	if _, ds := outputsOf(t, context.Background(), program, nil, nil); find(ds, "does not say which directory") == nil {
		t.Errorf("pulumi.cwd without a directory: %v", ds)
	}
}

func TestConfigurationTypes(t *testing.T) {
	program := `configuration:
  aList: {type: List<String>}
  nums: {type: list<number>}
  aString: {type: string}
  aNumber: {type: Number}
  flag: {type: bool}
  port: {type: int, default: 80}
  ids: {type: array, items: {type: integer}}
outputs:
  aList: ${aList}
  nums: ${nums}
  aString: ${aString}
  aNumber: ${aNumber}
  flag: ${flag}
  port: ${port}
  ids: ${ids}
  loose: ${loose}
  zero: ${zero}
`
	stack := `config:
  proj:aList: '["foo","bar"]'
  proj:nums: '[1, 2.5]'
  proj:aString: '"foo-bar"'
  proj:aNumber: "2.718"
  proj:flag: "true"
  proj:ids: [1, 2]
  proj:loose: '{"k": [1]}'
  proj:zero: "0123"
`
	out, ds := outputsOf(t, context.Background(), program, map[string]string{"Pulumi.dev.yaml": stack}, nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	for name, want := range map[string]cty.Value{
		"aList":   cty.TupleVal([]cty.Value{cty.StringVal("foo"), cty.StringVal("bar")}),
		"nums":    cty.TupleVal([]cty.Value{cty.NumberIntVal(1), cty.NumberFloatVal(2.5)}),
		"aString": cty.StringVal("foo-bar"), // a JSON-quoted string, as the YAML runtime reads it
		"aNumber": cty.NumberFloatVal(2.718),
		"flag":    cty.True,
		"port":    cty.NumberIntVal(80),
		"ids":     cty.TupleVal([]cty.Value{cty.NumberIntVal(1), cty.NumberIntVal(2)}),
		"loose":   cty.ObjectVal(map[string]cty.Value{"k": cty.TupleVal([]cty.Value{cty.NumberIntVal(1)})}),
		"zero":    cty.StringVal("0123"),
	} {
		if got := out[name]; !got.Equals(want).True() {
			t.Errorf("%s = %#v, want %#v", name, got, want)
		}
	}
	_, ds = outputsOf(t, context.Background(), program, map[string]string{"Pulumi.dev.yaml": strings.Replace(stack, `'["foo","bar"]'`, `'["foo",1]'`, 1)}, nil)
	if d := find(ds, `config "aList": element 1: expected a string`); d == nil || d.Range.Filename != "Pulumi.dev.yaml" {
		t.Errorf("a list of the wrong element type: %v", ds)
	}
}

func TestSecureConfigValues(t *testing.T) {
	salt := []byte("0123456789abcdef")
	c := config.NewSymmetricCrypterFromPassphrase("correct horse", salt)
	check, err := c.EncryptValue(context.Background(), "pulumi")
	if err != nil {
		t.Fatal(err)
	}
	secret, err := c.EncryptValue(context.Background(), "this is a secret")
	if err != nil {
		t.Fatal(err)
	}
	stack := "encryptionsalt: v1:" + base64.StdEncoding.EncodeToString(salt) + ":" + check + "\nconfig:\n  proj:aSecret:\n    secure: " + secret + "\n"
	program := "configuration:\n  aSecret: {type: string}\noutputs:\n  plain: {fn::unsecret: '${aSecret}'}\n  kept: ${aSecret}\n"
	files := map[string]string{"Pulumi.dev.yaml": stack}

	env := map[string]string{"PULUMI_CONFIG_PASSPHRASE": "correct horse"}
	old := lookupEnv
	t.Cleanup(func() { lookupEnv = old })
	lookupEnv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }

	out, ds := outputsOf(t, context.Background(), program, files, nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	if !out["kept"].RawEquals(cty.StringVal("this is a secret").Mark(value.Sensitive)) || !out["plain"].RawEquals(cty.StringVal("this is a secret")) {
		t.Errorf("kept %#v plain %#v", out["kept"], out["plain"])
	}

	for name, e := range map[string]map[string]string{
		"incorrect passphrase": {"PULUMI_CONFIG_PASSPHRASE": "wrong"},
		"set PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE": {},
	} {
		env = e
		_, ds := outputsOf(t, context.Background(), program, files, nil)
		d := find(ds, name)
		if d == nil || d.Range.Filename != "Pulumi.dev.yaml" || d.Range.Line != 3 {
			t.Errorf("want %q at Pulumi.dev.yaml:3, got %v", name, ds)
		}
		if strings.Contains(ds.Error(), secret) {
			t.Errorf("the ciphertext in a diagnostic: %v", ds)
		}
	}
}

func TestRequiredVersion(t *testing.T) {
	program := "configuration:\n  version: {type: string}\npulumi:\n  requiredVersion: ${version}\n"
	if _, ds := outputsOf(t, context.Background(), program, nil, map[string]string{"version": ">=3.0.0"}); ds.HasErrors() {
		t.Errorf(">=3.0.0: %v", ds)
	}
	_, ds := outputsOf(t, context.Background(), program, nil, map[string]string{"version": "=3.1.2"})
	if d := find(ds, `does not satisfy the version range "=3.1.2"`); d == nil || d.Path != "pulumi.requiredVersion" {
		t.Errorf("=3.1.2: %v", ds)
	}
}

// TestEngineResources: pulumi:Stash is served (by cairn's builtin provider, with no schema to
// ask); the engine's other resources are refused by name.
func TestEngineResources(t *testing.T) {
	for _, typ := range []string{"pulumi:Stash", "pulumi:index:Stash"} {
		st, ds := Parse(context.Background(), map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\nresources:\n  r:\n    type: " + typ + "\n    properties: {input: 1}\n"}, "dev", nil)
		if ds.HasErrors() {
			t.Fatalf("%s: %v", typ, ds)
		}
		if got := st.Resource("r").Type; got != "pulumi:index:Stash" {
			t.Errorf("%s resolves to %s, want pulumi:index:Stash", typ, got)
		}
	}
	for _, typ := range []string{"pulumi:pulumi:StackReference"} {
		_, ds := outputsOf(t, context.Background(), "resources:\n  r:\n    type: "+typ+"\n", nil, nil)
		if d := find(ds, "a resource the Pulumi engine serves itself"); d == nil || d.Range.Line != 5 {
			t.Errorf("%s: %v", typ, ds)
		}
	}
}
