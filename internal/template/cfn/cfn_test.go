package cfn

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

var opts = Options{StackName: "demo", StackID: "arn:aws:cloudformation:us-east-1:123456789012:stack/demo/1",
	Region: "us-east-1", AccountID: "123456789012"}

// scope is a fake template.Scope: known resources by name, unknown for the rest.
type scope map[string]template.ResourceValue

func (s scope) Resource(name string) (template.ResourceValue, bool) {
	if v, ok := s[name]; ok {
		return v, true
	}
	return template.UnknownResource, true
}

var known = scope{"Res": {ID: cty.StringVal("res-1"), Outputs: cty.ObjectVal(map[string]cty.Value{
	"Arn": cty.StringVal("arn:res"), "List": cty.TupleVal([]cty.Value{cty.StringVal("x"), cty.StringVal("y")}),
	"Nested": cty.ObjectVal(map[string]cty.Value{"Key": cty.StringVal("deep")})})}}

// evalProp parses a template whose resource Test has property P = src (YAML) next to a
// resource Res, and evaluates P in s.
func evalProp(t *testing.T, header, src string, s template.Scope) (any, error) {
	t.Helper()
	tmpl := header + "Resources:\n  Res: {Type: Custom::R}\n  Test:\n    Type: Custom::T\n    Properties:\n      P: " + src + "\n"
	st, diags := Parse("t.yaml", []byte(tmpl), opts)
	if diags.HasErrors() {
		return nil, diags.Err()
	}
	v, diags := st.Resource("Test").Properties.Eval(s)
	if diags.HasErrors() {
		return nil, diags.Err()
	}
	p, ok := value.Get(v, "P")
	if !ok {
		return "<absent>", nil
	}
	return value.Masked(p, "<unknown>"), nil
}

const header = `AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Env: {Type: String, Default: prod, AllowedValues: [dev, prod]}
  Count: {Type: Number, Default: 3}
  Zones: {Type: CommaDelimitedList, Default: "a, b,c"}
  Pass: {Type: String, NoEcho: true, Default: hunter2}
Mappings:
  Sizes:
    prod: {Small: 2, Big: 8}
Conditions:
  IsProd: !Equals [!Ref Env, prod]
  NotProd: !Not [!Condition IsProd]
  Both: !And [!Condition IsProd, !Equals ["1", "1"]]
`

func TestIntrinsics(t *testing.T) {
	cases := map[string]struct {
		reason string
		src    string
		s      template.Scope
		want   any
	}{
		"RefParam":          {reason: "CloudFormation parameters are strings.", src: "!Ref Count", want: "3"},
		"RefList":           {reason: "A CommaDelimitedList is a list of trimmed strings.", src: "!Ref Zones", want: []any{"a", "b", "c"}},
		"RefPseudo":         {reason: "Pseudo parameters come from the options.", src: "!Ref AWS::StackName", want: "demo"},
		"RefResource":       {reason: "Ref of a resource is its physical id.", src: "!Ref Res", s: known, want: "res-1"},
		"RefResourceLater":  {reason: "Not yet known during a preview.", src: "!Ref Res", s: scope{}, want: "<unknown>"},
		"GetAttShort":       {reason: "!GetAtt a.b reads an output.", src: "!GetAtt Res.Arn", s: known, want: "arn:res"},
		"GetAttList":        {reason: "The list form too.", src: `{"Fn::GetAtt": [Res, Arn]}`, s: known, want: "arn:res"},
		"GetAttNested":      {reason: "ROS-style nested attribute.", src: "!GetAtt Res.Nested.Key", s: known, want: "deep"},
		"SubString":         {reason: "Parameters, pseudo parameters, resources, attributes and literals.", src: `!Sub "${Env}-${AWS::Region}-${Res}-${Res.Arn}-${!Lit}"`, s: known, want: "prod-us-east-1-res-1-arn:res-${Lit}"},
		"SubVars":           {reason: "The list form's own variables win.", src: `!Sub ["${Env}/${X}", {X: !Ref Count, Env: local}]`, want: "local/3"},
		"SubUnknown":        {reason: "Unknown parts make the string unknown.", src: `!Sub "${Res.Arn}!"`, s: scope{}, want: "<unknown>"},
		"Join":              {reason: "Joins a list expression.", src: `!Join ["-", !Ref Zones]`, want: "a-b-c"},
		"JoinMixed":         {reason: "Numbers join as text.", src: `!Join ["", [a, 1, !Ref Env]]`, want: "a1prod"},
		"Select":            {reason: "String index.", src: `!Select ["1", !GetAtt Res.List]`, s: known, want: "y"},
		"Split":             {reason: "Splits a string.", src: `!Split [",", "a,b"]`, want: []any{"a", "b"}},
		"If":                {reason: "Conditions decided from parameters.", src: "!If [IsProd, big, small]", want: "big"},
		"IfNoValue":         {reason: "AWS::NoValue removes the property.", src: "!If [NotProd, x, !Ref AWS::NoValue]", want: "<absent>"},
		"NoValueInList":     {reason: "AWS::NoValue removes a list element.", src: "[a, !If [Both, !Ref AWS::NoValue, b], c]", want: []any{"a", "c"}},
		"FindInMap":         {reason: "Keys may be expressions.", src: "!FindInMap [Sizes, !Ref Env, Big]", want: json.Number("8")},
		"Base64":            {reason: "Fn::Base64.", src: "!Base64 hi", want: base64.StdEncoding.EncodeToString([]byte("hi"))},
		"Base64Decode":      {reason: "ROS Fn::Base64Decode.", src: `{"Fn::Base64Decode": aGk=}`, want: "hi"},
		"Replace":           {reason: "ROS Fn::Replace.", src: `{"Fn::Replace": [{"$a": "1", "$b": "2"}, "$a+$b"]}`, want: "1+2"},
		"Str":               {reason: "ROS Fn::Str.", src: `{"Fn::Str": 12}`, want: "12"},
		"Secret":            {reason: "NoEcho values stay secret through functions.", src: `!Sub "p=${Pass}"`, want: value.Mask},
		"Nested":            {reason: "Maps and lists keep their shape and types.", src: "{A: [1, true], B: {C: !Ref Env}}", want: map[string]any{"A": []any{json.Number("1"), true}, "B": map[string]any{"C": "prod"}}},
		"EqualsNumbersText": {reason: "Fn::Equals compares as CloudFormation does, as text.", src: `!If [Both, yes, no]`, want: "yes"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := tc.s
			if s == nil {
				s = scope{}
			}
			got, err := evalProp(t, header, tc.src, s)
			if err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nP = %s: -want +got\n%s", tc.reason, tc.src, diff)
			}
		})
	}
}

func TestAllErrorsAtOnce(t *testing.T) {
	src, err := os.ReadFile("testdata/all-errors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, diags := Parse("testdata/all-errors.yaml", src, opts)
	var got []string
	for _, d := range diags {
		got = append(got, d.Error())
	}
	want := []string{
		"testdata/all-errors.yaml:7:1: Resourcez: unknown template section Resourcez",
		"testdata/all-errors.yaml:3:3: Parameters.Size: parameter Size: must be at most MaxValue 10",
		"testdata/all-errors.yaml:16:3: Resources.Web: resource Web needs a Type",
		"testdata/all-errors.yaml:13:25: Resources.Db.Properties.Name.Fn::Join[1]: value must be a list",
		"testdata/all-errors.yaml:14:13: Resources.Db.Properties.Peer: Nope is not a parameter, pseudo parameter or resource of this template",
		"testdata/all-errors.yaml:15:12: Resources.Db.Properties.Bad: unknown function Fn::Foo",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diagnostics: -want +got\n%s", diff)
	}
}

func TestCycleIsNamed(t *testing.T) {
	src, err := os.ReadFile("testdata/cycle.json")
	if err != nil {
		t.Fatal(err)
	}
	_, diags := Parse("cycle.json", src, opts)
	if len(diags) != 1 || !strings.Contains(diags[0].Error(), "cycle.json:4:3: Resources.A: dependency cycle: A -> C -> B -> A") {
		t.Errorf("diagnostics = %v", diags)
	}
}

func TestDependenciesAndConditions(t *testing.T) {
	src := header + `Resources:
  A: {Type: Custom::A}
  Skipped: {Type: Custom::S, Condition: NotProd}
  B:
    Type: Custom::B
    DependsOn: A
    DeletionPolicy: Retain
    Properties:
      X: !Sub "${C.Out}"
      Y: !If [NotProd, !Ref Skipped, none]
  C: {Type: Custom::C}
Outputs:
  Out: {Value: !Ref B}
  Gone: {Value: x, Condition: NotProd}
`
	st, diags := Parse("t.yaml", []byte(src), opts)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	var names []string
	for _, r := range st.Resources {
		names = append(names, r.Name)
	}
	if diff := cmp.Diff([]string{"A", "B", "C"}, names); diff != "" {
		t.Errorf("resources: -want +got\n%s", diff)
	}
	b := st.Resource("B")
	if diff := cmp.Diff([]string{"A", "C"}, b.DependsOn); diff != "" {
		t.Errorf("B.DependsOn: -want +got\n%s", diff)
	}
	if b.DeletionPolicy != template.Retain || b.PropertyRange("X").Line != 22 {
		t.Errorf("B: policy %s, X at %+v", b.DeletionPolicy, b.PropertyRange("X"))
	}
	if len(st.Outputs) != 1 {
		t.Errorf("outputs: %d, want the conditional one left out", len(st.Outputs))
	}
	// Referring to a resource whose condition is false, outside a false branch, is an error.
	_, diags = Parse("t.yaml", []byte(strings.Replace(src, "!If [NotProd, !Ref Skipped, none]", "!Ref Skipped", 1)), opts)
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "condition NotProd is false") {
		t.Errorf("reference to an excluded resource: %v", diags)
	}
}

func TestParameters(t *testing.T) {
	cases := map[string]struct {
		reason, decl, given, want string
	}{
		"Allowed":    {reason: "AllowedValues.", decl: "{Type: String, AllowedValues: [a, b]}", given: "c", want: "must be one of the AllowedValues [a, b]"},
		"Pattern":    {reason: "AllowedPattern matches the whole value.", decl: "{Type: String, AllowedPattern: '[a-z]+'}", given: "ab1", want: "must match the AllowedPattern [a-z]+"},
		"MinLength":  {reason: "MinLength.", decl: "{Type: String, MinLength: 3}", given: "ab", want: "must be at least as long as MinLength 3"},
		"MaxLength":  {reason: "MaxLength.", decl: "{Type: String, MaxLength: 1}", given: "ab", want: "must be at most as long as MaxLength 1"},
		"Number":     {reason: "Number.", decl: "{Type: Number}", given: "x", want: "must be a number"},
		"MinValue":   {reason: "MinValue.", decl: "{Type: Number, MinValue: 5}", given: "4", want: "must be at least MinValue 5"},
		"Constraint": {reason: "ConstraintDescription leads.", decl: "{Type: Number, MaxValue: 1, ConstraintDescription: 'one at most'}", given: "2", want: "one at most (must be at most MaxValue 1)"},
		"Missing":    {reason: "No value, no default.", decl: "{Type: String}", want: "has no value"},
		"Secret":     {reason: "A NoEcho value is never quoted.", decl: "{Type: String, NoEcho: true, AllowedPattern: 'x'}", given: "hunter2", want: "must match"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			src := "Parameters:\n  P: " + tc.decl + "\nResources:\n  R: {Type: Custom::R}\n"
			o := opts
			if tc.given != "" {
				o.Parameters = map[string]string{"P": tc.given}
			}
			_, diags := Parse("t.yaml", []byte(src), o)
			if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.want) || strings.Contains(diags.Error(), "hunter2") {
				t.Errorf("%s\ndiagnostics = %v, want one containing %q", tc.reason, diags, tc.want)
			}
		})
	}
	// Validation without values: the parameter is unknown, not an error.
	o := opts
	o.Validate = true
	if _, diags := Parse("t.yaml", []byte("Parameters:\n  P: {Type: String}\nResources:\n  R: {Type: Custom::R, Properties: {X: !Ref P}}\n"), o); diags.HasErrors() {
		t.Errorf("Validate: %v", diags)
	}
}

func TestROSDialect(t *testing.T) {
	src := `{"ROSTemplateFormatVersion": "2015-09-01",
	"Parameters": {"N": {"Type": "Number", "Default": 3}, "On": {"Type": "Boolean", "Default": true}, "J": {"Type": "Json", "Default": "{\"a\": 1}"}},
	"Resources": {"my_res": {"Type": "ALIYUN::ROS::CustomResource", "Properties": {"Parameters": {"N": {"Ref": "N"}, "On": {"Ref": "On"}, "J": {"Ref": "J"}, "R": {"Ref": "ALIYUN::Region"}}}}}}`
	if d, ok := Detect([]byte(src)); !ok || d != template.ROS {
		t.Fatalf("Detect = %v, %v", d, ok)
	}
	st, diags := Parse("t.json", []byte(src), opts)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	v, _ := st.Resource("my_res").Properties.Eval(scope{})
	got := value.Masked(v, "?")
	want := map[string]any{"Parameters": map[string]any{"N": json.Number("3"), "On": true, "J": map[string]any{"a": json.Number("1")}, "R": "us-east-1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ROS keeps parameter types: -want +got\n%s", diff)
	}
}
