package pulumiyaml

import (
	"context"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"

	"github.com/cairn-dev/cairn/internal/budget"
)

// scope is a template.Scope with fixed resource values.
type scope map[string]template.ResourceValue

func (s scope) Resource(name string) (template.ResourceValue, bool) {
	rv, ok := s[name]
	return rv, ok
}
func (scope) Context() context.Context { return context.Background() }

const projectYAML = `name: shop
runtime: yaml
description: a small shop
config:
  prefix:
    type: string
    default: web
`

const mainYAML = `config:
  replicas:
    type: integer
    default: 2
  debug:
    type: boolean
    default: false
  zones:
    type: array
  dbPassword:
    type: string
    secret: true
variables:
  suffix: ${prefix}-${pulumi.stack}
  firstZone:
    fn::select: [0, "${zones}"]
resources:
  bucket:
    type: aws:s3:Bucket
    properties:
      bucketName: ${suffix}
      zone: ${firstZone}
      count: ${replicas}
      tags:
        env: ${pulumi.stack}
        literal: $${notInterpolated}
  db:
    type: aws:rds:Instance
    properties:
      password: ${dbPassword}
      bucketArn: ${bucket.arn}
      firstRule: ${bucket.rules[0]["name"]}
      label: "db for ${bucket.id} x${replicas}"
    options:
      protect: true
      deleteBeforeReplace: true
      retainOnDelete: true
      ignoreChanges: [tags.owner, "ports[0]"]
      version: 6.1.0
  later:
    type: random:RandomId
    properties:
      byteLength: 8
    options:
      dependsOn: ["${db}"]
outputs:
  bucketName: ${bucket.bucketName}
  joined:
    fn::join: ["-", ["${prefix}", "${pulumi.project}"]]
  parts:
    fn::split: [",", "a,b,c"]
  doc:
    fn::toJSON:
      zones: ${zones}
      n: ${replicas}
  hidden:
    fn::secret: ${prefix}
`

const stackFile = `config:
  shop:replicas: "3"
  zones:
    - eu-1a
    - eu-1b
  aws:region: eu-west-1
`

func files() map[string]string {
	return map[string]string{"Pulumi.yaml": projectYAML, "Main.yaml": mainYAML, "Pulumi.dev.yaml": stackFile}
}

func mustParse(t *testing.T, fs map[string]string, overrides map[string]string) *template.Stack {
	t.Helper()
	st, ds := Parse(context.Background(), fs, "dev", overrides)
	if ds.HasErrors() {
		t.Fatalf("parse: %v", ds)
	}
	return st
}

func eval(t *testing.T, x template.Expr, s scope) cty.Value {
	t.Helper()
	v, ds := x.Eval(s)
	if ds.HasErrors() {
		t.Fatalf("eval: %v", ds)
	}
	return v
}

func TestParseProgram(t *testing.T) {
	st := mustParse(t, files(), map[string]string{"dbPassword": "hunter2"})
	if st.Dialect != template.PulumiYAML || st.Policy.Dialect != template.PulumiYAML || !st.Policy.PlansReplacements || st.Policy.RollsBack || !st.Policy.BlindResumedCreates {
		t.Fatalf("policy: %+v", st.Policy)
	}
	if st.Description != "" {
		t.Errorf("description comes from the program, got %q", st.Description)
	}
	var names []string
	for _, r := range st.Resources {
		names = append(names, r.Name)
	}
	if strings.Join(names, ",") != "bucket,db,later" {
		t.Fatalf("resources %v", names)
	}
	bucket, db, later := st.Resource("bucket"), st.Resource("db"), st.Resource("later")
	if len(bucket.DependsOn) != 0 || strings.Join(db.DependsOn, ",") != "bucket" || strings.Join(later.DependsOn, ",") != "db" {
		t.Errorf("deps: bucket %v db %v later %v", bucket.DependsOn, db.DependsOn, later.DependsOn)
	}
	if !bucket.CreateBeforeDestroy || bucket.PreventDestroy || bucket.DeletionPolicy != template.Delete {
		t.Errorf("bucket options: %+v", bucket)
	}
	if db.CreateBeforeDestroy || !db.PreventDestroy || db.DeletionPolicy != template.Retain {
		t.Errorf("db options: cbd %v protect %v policy %v", db.CreateBeforeDestroy, db.PreventDestroy, db.DeletionPolicy)
	}
	want := []cty.Path{cty.GetAttrPath("tags").GetAttr("owner"), cty.GetAttrPath("ports").IndexInt(0)}
	if len(db.IgnoreChanges) != 2 || !db.IgnoreChanges[0].Equals(want[0]) || !db.IgnoreChanges[1].Equals(want[1]) {
		t.Errorf("ignoreChanges %#v", db.IgnoreChanges)
	}
	reqs := map[string]string{}
	for _, r := range st.Requirements {
		reqs[r.Name] = r.Versions
	}
	if len(reqs) != 2 || reqs["aws"] != "6.1.0" || reqs["random"] != "" {
		t.Errorf("requirements %v", reqs)
	}
	if rng := db.PropertyRange("bucketArn"); rng.Filename != "Main.yaml" || rng.Line != 31 || rng.Column != 18 {
		t.Errorf("bucketArn at %v", rng)
	}
	if rng := bucket.PropertyRange("tags.env"); rng.Line != 25 {
		t.Errorf("tags.env at %v", rng)
	}
	if bucket.Range.Line != 18 || bucket.TypeRange.Line != 19 || bucket.TypeRange.Column != 11 {
		t.Errorf("bucket at %v, type at %v", bucket.Range, bucket.TypeRange)
	}
}

func TestInterpolationTyping(t *testing.T) {
	st := mustParse(t, files(), map[string]string{"dbPassword": "hunter2"})
	props := eval(t, st.Resource("bucket").Properties, scope{})
	if got := props.GetAttr("count"); !got.RawEquals(cty.NumberIntVal(3)) {
		t.Errorf("count alone keeps the config's integer type: %#v", got)
	}
	if got := props.GetAttr("bucketName"); !got.RawEquals(cty.StringVal("web-dev")) {
		t.Errorf("bucketName %#v", got)
	}
	if got := props.GetAttr("zone"); !got.RawEquals(cty.StringVal("eu-1a")) {
		t.Errorf("zone %#v", got)
	}
	tags := props.GetAttr("tags")
	if got := tags.GetAttr("literal"); !got.RawEquals(cty.StringVal("${notInterpolated}")) {
		t.Errorf("escape: %#v", got)
	}

	// Before bucket exists, what db reads of it is unknown; its own values are known.
	db := st.Resource("db")
	pre := eval(t, db.Properties, scope{})
	if pre.GetAttr("bucketArn").IsKnown() || pre.GetAttr("label").IsKnown() {
		t.Errorf("unknown bucket should leave db's references unknown: %#v", pre)
	}
	if pw := pre.GetAttr("password"); !pw.HasMark(value.Sensitive) || pw.Type() != cty.String {
		t.Errorf("secret config stays secret: %#v", pw)
	}
	applied := scope{"bucket": {ID: cty.StringVal("b-123"), Outputs: cty.ObjectVal(map[string]cty.Value{
		"arn":   cty.StringVal("arn:aws:s3:::b-123"),
		"rules": cty.TupleVal([]cty.Value{cty.ObjectVal(map[string]cty.Value{"name": cty.StringVal("expire")})}),
	})}}
	post := eval(t, db.Properties, applied)
	for k, want := range map[string]string{"bucketArn": "arn:aws:s3:::b-123", "firstRule": "expire", "label": "db for b-123 x3"} {
		if got := post.GetAttr(k); !got.RawEquals(cty.StringVal(want)) {
			t.Errorf("%s = %#v, want %q", k, got, want)
		}
	}
}

func TestOutputsAndBuiltins(t *testing.T) {
	st := mustParse(t, files(), map[string]string{"dbPassword": "x"})
	outs := map[string]template.Expr{}
	for _, o := range st.Outputs {
		outs[o.Name] = o.Value
	}
	applied := scope{"bucket": {ID: cty.StringVal("b"), Outputs: cty.ObjectVal(map[string]cty.Value{"bucketName": cty.StringVal("web-dev")})}}
	check := func(name string, want cty.Value) {
		t.Helper()
		if got := eval(t, outs[name], applied); !got.RawEquals(want) {
			t.Errorf("%s = %#v, want %#v", name, got, want)
		}
	}
	check("bucketName", cty.StringVal("web-dev"))
	check("joined", cty.StringVal("web-shop"))
	check("parts", cty.ListVal([]cty.Value{cty.StringVal("a"), cty.StringVal("b"), cty.StringVal("c")}))
	check("doc", cty.StringVal(`{"n":3,"zones":["eu-1a","eu-1b"]}`))
	check("hidden", cty.StringVal("web").Mark(value.Sensitive))
	if v := eval(t, outs["bucketName"], scope{}); v.IsKnown() {
		t.Errorf("output of an unapplied resource should be unknown: %#v", v)
	}
}

func TestConfigTyping(t *testing.T) {
	st := mustParse(t, files(), map[string]string{"shop:dbPassword": "s3cret", "debug": "true"})
	params := map[string]*template.Parameter{}
	for _, p := range st.Parameters {
		params[p.Name] = p
	}
	for name, want := range map[string]cty.Value{
		"prefix":     cty.StringVal("web"), // default from Pulumi.yaml
		"replicas":   cty.NumberIntVal(3),  // "3" in the stack file, typed integer
		"debug":      cty.True,             // override
		"zones":      cty.TupleVal([]cty.Value{cty.StringVal("eu-1a"), cty.StringVal("eu-1b")}),
		"dbPassword": cty.StringVal("s3cret").Mark(value.Sensitive),
		"aws:region": cty.StringVal("eu-west-1"), // provider config, kept under its full key
	} {
		p := params[name]
		if p == nil {
			t.Errorf("no parameter %s", name)
			continue
		}
		if !p.Value.RawEquals(want) {
			t.Errorf("%s = %#v, want %#v", name, p.Value, want)
		}
	}
	if !params["dbPassword"].NoEcho || params["prefix"].NoEcho {
		t.Errorf("NoEcho: dbPassword %v prefix %v", params["dbPassword"].NoEcho, params["prefix"].NoEcho)
	}
}

func TestConfigErrors(t *testing.T) {
	for name, c := range map[string]struct {
		overrides map[string]string
		stack     string
		want      string
		line      int
		file      string
	}{
		"missing":    {want: `config "dbPassword" has no value`, line: 10, file: "Main.yaml"},
		"badInteger": {overrides: map[string]string{"dbPassword": "x", "replicas": "three"}, want: `expected an integer, got "three"`},
		"badBool":    {overrides: map[string]string{"dbPassword": "x", "debug": "maybe"}, want: "expected true or false"},
		"badArray":   {overrides: map[string]string{"dbPassword": "x", "zones": `{"a":1}`}, want: "expected an array"},
		"secure": {stack: "config:\n  zones: [a]\n  shop:dbPassword:\n    secure: v1:abc\n",
			want: "the stack file has secure values but no encryptionsalt", line: 3, file: "Pulumi.dev.yaml"},
	} {
		t.Run(name, func(t *testing.T) {
			fs := files()
			if c.stack != "" {
				fs["Pulumi.dev.yaml"] = c.stack
			}
			_, ds := Parse(context.Background(), fs, "dev", c.overrides)
			d := find(ds, c.want)
			if d == nil {
				t.Fatalf("want %q, got %v", c.want, ds)
			}
			if c.line != 0 && (d.Range.Line != c.line || d.Range.Filename != c.file) {
				t.Errorf("at %v, want %s:%d", d.Range, c.file, c.line)
			}
		})
	}
}

func find(ds diag.Diagnostics, text string) *diag.Diagnostic {
	for i := range ds {
		if strings.Contains(ds[i].Summary, text) {
			return &ds[i]
		}
	}
	return nil
}

func TestRefusalsAndPositions(t *testing.T) {
	for name, c := range map[string]struct {
		project, main string
		want          string
		file          string
		line, col     int
		path          string
	}{
		"runtime": {project: "name: p\nruntime: nodejs\n", want: "runtime nodejs: cairn runs only Pulumi YAML programs", file: "Pulumi.yaml", line: 2, col: 1},
		"runtimeObject": {project: "name: p\nruntime:\n  name: yaml\n  options: {}\nresources:\n  r:\n    type: x:y:Z\n    properties:\n      a:\n        fn::method: ./f\n",
			want: "fn::method is not supported yet", file: "Pulumi.yaml", line: 10, col: 9, path: "resources.r.properties.a.fn::method"},
		"yamlSyntax":   {main: "resources:\n  r:\n    type: [unclosed\n", want: "invalid YAML: did not find expected ',' or ']'", file: "Main.yaml", line: 2},
		"alias":        {main: "resources:\n  r: &x\n    type: a:b:C\n  s: *x\n", want: "alias nodes are not supported", file: "Main.yaml", line: 4, col: 6},
		"invokeOption": {main: "variables:\n  v:\n    fn::invoke: {function: a:b:c, options: {frob: 1}}\n", want: `unknown fn::invoke option "frob"`, file: "Main.yaml"},
		"unknownFn":    {main: "variables:\n  v:\n    fn::frobnicate: 1\n", want: "unknown built-in function fn::frobnicate"},
		"option": {main: "resources:\n  r:\n    type: x:y:Z\n    options:\n      replacementTrigger: 1\n",
			want: "the replacementTrigger option is not supported by cairn", file: "Main.yaml", line: 5, col: 7, path: "resources.r.options.replacementTrigger"},
		"unknownRef": {main: "resources:\n  r:\n    type: x:y:Z\n    properties:\n      a: x-${nope.b}\n",
			want: `"nope" is not a config value, variable or resource`, file: "Main.yaml", line: 5, col: 10, path: "resources.r.properties.a"},
		"badAccess":    {main: "variables:\n  v: ${a[x]}\n", want: "invalid property access ${a[x]}"},
		"unterminated": {main: "variables:\n  v: ${a.b\n", want: "unterminated interpolation"},
		"cycle": {main: "resources:\n  a:\n    type: x:y:Z\n    properties: {p: '${b.q}'}\n  b:\n    type: x:y:Z\n    properties: {p: '${a.q}'}\n",
			want: "dependency cycle: a -> b -> a"},
		"varCycle":    {main: "variables:\n  a: ${b}\n  b: ${a}\nresources:\n  r:\n    type: x:y:Z\n    properties: {p: '${a}'}\n", want: "refers to itself"},
		"duplicate":   {main: "variables:\n  r: 1\nresources:\n  r:\n    type: x:y:Z\n", want: `"r" is already declared at Main.yaml:2:3`},
		"notProvider": {main: "resources:\n  a:\n    type: x:y:Z\n  b:\n    type: x:y:Z\n    options:\n      provider: ${a}\n", want: "${a} is not a provider resource"},
		"dependsOn":   {main: "resources:\n  a:\n    type: x:y:Z\n    options:\n      dependsOn: [\"${a.id}\"]\n", want: "expected a resource reference"},
		"versions": {main: "resources:\n  a:\n    type: x:y:Z\n    options: {version: 1.0.0}\n  b:\n    type: x:y:W\n    options: {version: 2.0.0}\n",
			want: "package x is asked for at version 2.0.0 here and 1.0.0 elsewhere"},
		"get":        {main: "resources:\n  a:\n    type: x:y:Z\n    get: {id: abc}\n", want: "get (reading an existing resource) is not supported yet"},
		"noType":     {main: "resources:\n  a:\n    properties: {}\n", want: `resource "a" needs a type`},
		"configType": {project: "name: p\nruntime: yaml\nconfiguration:\n  a: {type: Strin}\n", want: "config type must be one of String, Number"},
	} {
		t.Run(name, func(t *testing.T) {
			fs := map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\n"}
			if c.project != "" {
				fs["Pulumi.yaml"] = c.project
			}
			if c.main != "" {
				fs["Main.yaml"] = c.main
			}
			st, ds := Parse(context.Background(), fs, "dev", nil)
			if !ds.HasErrors() || st != nil {
				t.Fatalf("want an error, got %v", ds)
			}
			d := find(ds, c.want)
			if d == nil {
				t.Fatalf("want %q, got %v", c.want, ds)
			}
			if c.line != 0 && (d.Range.Filename != c.file || d.Range.Line != c.line || d.Range.Column != c.col) {
				t.Errorf("at %v, want %s:%d:%d", d.Range, c.file, c.line, c.col)
			}
			if c.path != "" && d.Path != c.path {
				t.Errorf("path %q, want %q", d.Path, c.path)
			}
		})
	}
}

func TestWarningsKeepParsing(t *testing.T) {
	fs := map[string]string{"Pulumi.yaml": `name: p
runtime: yaml
colour: blue
resources:
  prov:
    type: pulumi:providers:random
  r:
    type: random:RandomId
    properties:
      byteLength: 4
    options:
      provider: ${prov}
`}
	st, ds := Parse(context.Background(), fs, "dev", nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	if find(ds, "unknown project key \"colour\" is ignored") == nil {
		t.Errorf("want a warning for the project key cairn ignores, got %v", ds)
	}
	r := st.Resource("r")
	if r.Provider != ProviderAddr("random", "prov") || strings.Join(r.DependsOn, ",") != "prov" {
		t.Errorf("provider %q deps %v", r.Provider, r.DependsOn)
	}
	if len(st.Requirements) != 1 || st.Requirements[0].Name != "random" {
		t.Errorf("requirements %+v", st.Requirements)
	}
}

func TestUnknownsThroughBuiltins(t *testing.T) {
	fs := map[string]string{"Pulumi.yaml": `name: p
runtime: yaml
resources:
  a:
    type: x:y:Z
  b:
    type: x:y:Z
    properties:
      joined:
        fn::join: [",", ["${a.x}", "k"]]
      picked:
        fn::select: [1, ["${a.x}", "known"]]
      json:
        fn::toJSON: {v: "${a.x}"}
      secretJoin:
        fn::join: ["", [{fn::secret: s}, "t"]]
`}
	st := mustParse(t, fs, nil)
	v := eval(t, st.Resource("b").Properties, scope{})
	if v.GetAttr("joined").IsKnown() || v.GetAttr("json").IsKnown() {
		t.Errorf("unknown inputs give unknown results: %#v", v)
	}
	if got := v.GetAttr("picked"); !got.RawEquals(cty.StringVal("known")) {
		t.Errorf("select of a known element is known: %#v", got)
	}
	if got := v.GetAttr("secretJoin"); !got.RawEquals(cty.StringVal("st").Mark(value.Sensitive)) {
		t.Errorf("a secret input makes the result secret: %#v", got)
	}
	if strings.Join(st.Resource("b").DependsOn, ",") != "a" {
		t.Errorf("deps %v", st.Resource("b").DependsOn)
	}
}

// TestHostileInputBounded: a program nested deeper than the request's budget, or one that may
// hold far more YAML nodes than it allows, is refused before decoding, and a long unterminated
// interpolation is quoted in part only.
func TestHostileInputBounded(t *testing.T) {
	ctx := budget.WithLimits(context.Background(), budget.Limits{Depth: 50, AliasNodes: 1000})
	deep := "name: p\nruntime: yaml\nvariables:\n  x: " + strings.Repeat("[", 51) + strings.Repeat("]", 51) + "\n"
	_, ds := Parse(ctx, map[string]string{ProjectFile: deep}, "dev", nil)
	if !ds.HasErrors() || !strings.Contains(ds.Err().Error(), "the program's nesting") {
		t.Errorf("deep program: %v", ds.Err())
	}
	wide := "name: p\nruntime: yaml\nvariables:\n  x: [" + strings.Repeat("1,", 100000) + "1]\n"
	_, ds = Parse(ctx, map[string]string{ProjectFile: wide}, "dev", nil)
	if !ds.HasErrors() || !strings.Contains(ds.Err().Error(), "Pulumi.yaml's YAML nodes") {
		t.Errorf("wide program: %v", ds.Err())
	}
	long := "name: p\nruntime: yaml\nvariables:\n  x: \"" + strings.Repeat("${", 50000) + "\"\n"
	_, ds = Parse(context.Background(), map[string]string{ProjectFile: long}, "dev", nil)
	if !ds.HasErrors() || len(ds.Err().Error()) > 1000 {
		t.Errorf("long unterminated interpolation: %d bytes of error", len(ds.Err().Error()))
	}
}
