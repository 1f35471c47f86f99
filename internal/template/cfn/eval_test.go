package cfn

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

var opts = Options{StackName: "demo", StackID: "arn:aws:cloudformation:us-east-1:123456789012:stack/demo/1",
	Region: "us-east-1", AccountID: "123456789012"}

// scope is a fake template.Scope: the resources it has are known, every other resource of the
// stack is not known yet.
type scope map[string]template.ResourceValue

func (s scope) Resource(name string) (template.ResourceValue, bool) {
	if v, ok := s[name]; ok {
		return v, true
	}
	return template.UnknownResource, true
}

func (scope) Context() context.Context { return context.Background() }

var known = scope{
	"Res": {ID: cty.StringVal("res-1"), Outputs: cty.ObjectVal(map[string]cty.Value{
		"Arn":    cty.StringVal("arn:res"),
		"List":   cty.TupleVal([]cty.Value{cty.StringVal("x"), cty.StringVal("y")}),
		"Nested": cty.ObjectVal(map[string]cty.Value{"Key": cty.StringVal("deep")}),
		"Token":  value.Secret(cty.StringVal("t0k3n")),
	})},
	"my_res": {ID: cty.StringVal("ros-1"), Outputs: cty.ObjectVal(map[string]cty.Value{
		"Outputs": cty.ObjectVal(map[string]cty.Value{"Key": cty.StringVal("v")}),
	})},
}

// halfKnown has Res's id but not yet its outputs.
var halfKnown = scope{"Res": {ID: cty.StringVal("res-1"), Outputs: cty.DynamicVal}}

// evalP parses testdata file with Test's property P set to src and evaluates P in s.
func evalP(t *testing.T, file, src string, s template.Scope) (cty.Value, diag.Diagnostics) {
	t.Helper()
	b, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	st, diags := Parse(file, []byte(strings.Replace(string(b), "__P__", src, 1)), opts)
	if diags.HasErrors() {
		return cty.NilVal, diags
	}
	v, diags := st.Resource("Test").Properties.Eval(s)
	if diags.HasErrors() {
		return cty.NilVal, diags
	}
	p, ok := value.Get(v, "P")
	if !ok {
		return cty.StringVal("<absent>"), nil
	}
	return p, nil
}

func list(s ...any) []any { return s }

func TestIntrinsics(t *testing.T) {
	cases := map[string]struct {
		reason     string
		ros        bool   // testdata/ros.* instead of testdata/intrinsics.*
		yaml, json string // the short form and the long form
		s          scope
		want       any // value.Masked(P, "<unknown>")
	}{
		"RefString":        {reason: "A String parameter.", yaml: "!Ref Env", json: `{"Ref": "Env"}`, want: "prod"},
		"RefNumber":        {reason: "CloudFormation parameters are strings, Numbers too.", yaml: "!Ref Count", json: `{"Ref": "Count"}`, want: "3"},
		"RefCommaList":     {reason: "A CommaDelimitedList is a list of trimmed strings.", yaml: "!Ref Zones", json: `{"Ref": "Zones"}`, want: list("a", "b", "c")},
		"RefNumberList":    {reason: "List<Number> is a list of strings in CloudFormation.", yaml: "!Ref Ports", json: `{"Ref": "Ports"}`, want: list("80", "443")},
		"RefAWSType":       {reason: "AWS-specific parameter types are strings.", yaml: "!Ref Key", json: `{"Ref": "Key"}`, want: "my-key"},
		"RefStackName":     {reason: "Pseudo parameters come from the options.", yaml: "!Ref AWS::StackName", json: `{"Ref": "AWS::StackName"}`, want: "demo"},
		"RefStackId":       {reason: "AWS::StackId.", yaml: "!Ref AWS::StackId", json: `{"Ref": "AWS::StackId"}`, want: opts.StackID},
		"RefRegion":        {reason: "AWS::Region.", yaml: "!Ref AWS::Region", json: `{"Ref": "AWS::Region"}`, want: "us-east-1"},
		"RefAccount":       {reason: "AWS::AccountId.", yaml: "!Ref AWS::AccountId", json: `{"Ref": "AWS::AccountId"}`, want: "123456789012"},
		"RefPartition":     {reason: "AWS::Partition derives from the region.", yaml: "!Ref AWS::Partition", json: `{"Ref": "AWS::Partition"}`, want: "aws"},
		"RefURLSuffix":     {reason: "AWS::URLSuffix.", yaml: "!Ref AWS::URLSuffix", json: `{"Ref": "AWS::URLSuffix"}`, want: "amazonaws.com"},
		"RefResource":      {reason: "Ref of a resource is its physical id.", yaml: "!Ref Res", json: `{"Ref": "Res"}`, s: known, want: "res-1"},
		"RefResourceLater": {reason: "Not yet known during a preview.", yaml: "!Ref Res", json: `{"Ref": "Res"}`, want: "<unknown>"},
		"GetAttString":     {reason: "The \"Res.Attr\" form.", yaml: "!GetAtt Res.Arn", json: `{"Fn::GetAtt": "Res.Arn"}`, s: known, want: "arn:res"},
		"GetAttList":       {reason: "The [Res, Attr] form.", yaml: "!GetAtt [Res, Arn]", json: `{"Fn::GetAtt": ["Res", "Arn"]}`, s: known, want: "arn:res"},
		"GetAttNested":     {reason: "The first dot separates; the rest is a path through the outputs.", yaml: "!GetAtt Res.Nested.Key", json: `{"Fn::GetAtt": ["Res", "Nested.Key"]}`, s: known, want: "deep"},
		"GetAttList2":      {reason: "A list attribute keeps its shape.", yaml: "!GetAtt Res.List", json: `{"Fn::GetAtt": "Res.List"}`, s: known, want: list("x", "y")},
		"GetAttOutputsLater": {reason: "Unknown outputs give an unknown attribute.", yaml: "!GetAtt Res.Arn",
			json: `{"Fn::GetAtt": ["Res", "Arn"]}`, s: halfKnown, want: "<unknown>"},
		"SubString": {reason: "Parameters, pseudo parameters, resources, attributes and literals.",
			yaml: `!Sub "${Env}-${AWS::Region}-${Res}-${Res.Arn}-${!Lit}-${Count}"`,
			json: `{"Fn::Sub": "${Env}-${AWS::Region}-${Res}-${Res.Arn}-${!Lit}-${Count}"}`, s: known,
			want: "prod-us-east-1-res-1-arn:res-${Lit}-3"},
		"SubVars": {reason: "The list form's own variables win over parameters.", yaml: `!Sub ["${Env}/${X}", {X: !Ref Count, Env: local}]`,
			json: `{"Fn::Sub": ["${Env}/${X}", {"X": {"Ref": "Count"}, "Env": "local"}]}`, want: "local/3"},
		"SubUnknown": {reason: "An unknown part makes the string unknown.", yaml: `!Sub "${Res.Arn}!"`, json: `{"Fn::Sub": "${Res.Arn}!"}`, want: "<unknown>"},
		"SubIdKnown": {reason: "Only the outputs are unknown; the id is there.", yaml: `!Sub "${Res}!"`, json: `{"Fn::Sub": "${Res}!"}`, s: halfKnown, want: "res-1!"},
		"Join":       {reason: "Joins a list expression.", yaml: `!Join ["-", !Ref Zones]`, json: `{"Fn::Join": ["-", {"Ref": "Zones"}]}`, want: "a-b-c"},
		"JoinMixed": {reason: "Numbers and booleans join as text.", yaml: `!Join ["", [a, 1, true, !Ref Env]]`,
			json: `{"Fn::Join": ["", ["a", 1, true, {"Ref": "Env"}]]}`, want: "a1trueprod"},
		"JoinUnknown": {reason: "An unknown element makes the result an unknown string.", yaml: `!Join [",", [a, !Ref Res]]`,
			json: `{"Fn::Join": [",", ["a", {"Ref": "Res"}]]}`, want: "<unknown>"},
		"JoinEmpty":  {reason: "Joining nothing is the empty string.", yaml: `!Join [",", []]`, json: `{"Fn::Join": [",", []]}`, want: ""},
		"Select":     {reason: "A numeric index.", yaml: `!Select [1, !Ref Zones]`, json: `{"Fn::Select": [1, {"Ref": "Zones"}]}`, want: "b"},
		"SelectText": {reason: "A string index, over an attribute.", yaml: `!Select ["1", !GetAtt Res.List]`, json: `{"Fn::Select": ["1", {"Fn::GetAtt": ["Res", "List"]}]}`, s: known, want: "y"},
		"SelectLater": {reason: "Selecting from an unknown list is unknown.", yaml: `!Select [0, !GetAtt Res.List]`,
			json: `{"Fn::Select": [0, {"Fn::GetAtt": ["Res", "List"]}]}`, want: "<unknown>"},
		"Split":     {reason: "Splits a string.", yaml: `!Split [",", "a,b"]`, json: `{"Fn::Split": [",", "a,b"]}`, want: list("a", "b")},
		"SplitJoin": {reason: "Functions nest.", yaml: `!Join [":", !Split [",", "x,y"]]`, json: `{"Fn::Join": [":", {"Fn::Split": [",", "x,y"]}]}`, want: "x:y"},
		"IfTrue":    {reason: "Conditions are decided from parameters.", yaml: "!If [IsProd, big, small]", json: `{"Fn::If": ["IsProd", "big", "small"]}`, want: "big"},
		"IfFalse":   {reason: "The false branch.", yaml: "!If [NotProd, big, small]", json: `{"Fn::If": ["NotProd", "big", "small"]}`, want: "small"},
		"IfNoValue": {reason: "AWS::NoValue removes the property.", yaml: "!If [NotProd, x, !Ref AWS::NoValue]",
			json: `{"Fn::If": ["NotProd", "x", {"Ref": "AWS::NoValue"}]}`, want: "<absent>"},
		"NoValueInList": {reason: "AWS::NoValue removes a list element.", yaml: "[a, !If [Both, !Ref AWS::NoValue, b], c]",
			json: `["a", {"Fn::If": ["Both", {"Ref": "AWS::NoValue"}, "b"]}, "c"]`, want: list("a", "c")},
		"NoValueInMap": {reason: "AWS::NoValue removes a map entry.", yaml: "{A: !Ref AWS::NoValue, B: b}",
			json: `{"A": {"Ref": "AWS::NoValue"}, "B": "b"}`, want: map[string]any{"B": "b"}},
		"Equals":    {reason: "Fn::Equals compares as text: \"3\" equals 3.", yaml: "!Equals [!Ref Count, 3]", json: `{"Fn::Equals": [{"Ref": "Count"}, 3]}`, want: true},
		"EqualsNot": {reason: "Different values.", yaml: "!Equals [a, b]", json: `{"Fn::Equals": ["a", "b"]}`, want: false},
		"And": {reason: "Both conditions hold.", yaml: "!And [!Condition IsProd, !Condition Either]",
			json: `{"Fn::And": [{"Condition": "IsProd"}, {"Condition": "Either"}]}`, want: true},
		"Or": {reason: "Neither holds.", yaml: "!Or [!Condition NotProd, !Equals [a, b]]",
			json: `{"Fn::Or": [{"Condition": "NotProd"}, {"Fn::Equals": ["a", "b"]}]}`, want: false},
		"Not":       {reason: "Negation.", yaml: "!Not [!Condition NotProd]", json: `{"Fn::Not": [{"Condition": "NotProd"}]}`, want: true},
		"Condition": {reason: "A condition's value.", yaml: "!Condition Both", json: `{"Fn::And": [{"Condition": "Both"}, {"Condition": "IsProd"}]}`, want: true},
		"FindInMap": {reason: "Keys may be expressions; numbers stay numbers.", yaml: "!FindInMap [Sizes, !Ref Env, Big]",
			json: `{"Fn::FindInMap": ["Sizes", {"Ref": "Env"}, "Big"]}`, want: json.Number("8")},
		"FindInMapList": {reason: "A list value.", yaml: "!FindInMap [Sizes, dev, Names]", json: `{"Fn::FindInMap": ["Sizes", "dev", "Names"]}`, want: list("x")},
		"Base64":        {reason: "Fn::Base64.", yaml: "!Base64 hi", json: `{"Fn::Base64": "hi"}`, want: "aGk="},
		"Base64Sub":     {reason: "Fn::Base64 of an expression.", yaml: `!Base64 {"Fn::Sub": "${Env}"}`, json: `{"Fn::Base64": {"Fn::Sub": "${Env}"}}`, want: "cHJvZA=="},
		"GetAZs":        {reason: "Three zones of the stack's region.", yaml: `!GetAZs ""`, json: `{"Fn::GetAZs": ""}`, want: list("us-east-1a", "us-east-1b", "us-east-1c")},
		"GetAZsRegion":  {reason: "Of a given region.", yaml: `!GetAZs eu-west-1`, json: `{"Fn::GetAZs": "eu-west-1"}`, want: list("eu-west-1a", "eu-west-1b", "eu-west-1c")},
		"Nested": {reason: "Maps and lists keep their shape and scalar types.", yaml: "{A: [1, true, null], B: {C: !Ref Env}}",
			json: `{"A": [1, true, null], "B": {"C": {"Ref": "Env"}}}`, want: map[string]any{"A": list(json.Number("1"), true, nil), "B": map[string]any{"C": "prod"}}},
		"Secret": {reason: "A NoEcho value stays secret through functions.", yaml: `!Sub "p=${Pass}"`, json: `{"Fn::Sub": "p=${Pass}"}`, want: value.Mask},
		"SecretAttribute": {reason: "A secret output stays secret.", yaml: `!Join ["", [x, !GetAtt Res.Token]]`,
			json: `{"Fn::Join": ["", ["x", {"Fn::GetAtt": ["Res", "Token"]}]]}`, s: known, want: value.Mask},

		// ROS.
		"ROSNumber": {reason: "ROS Numbers are numbers.", ros: true, yaml: "!Ref N", json: `{"Ref": "N"}`, want: json.Number("3")},
		"ROSBool":   {reason: "ROS Booleans are booleans.", ros: true, yaml: "!Ref On", json: `{"Ref": "On"}`, want: true},
		"ROSJson": {reason: "A Json default written as a value.", ros: true, yaml: "!Ref J", json: `{"Ref": "J"}`,
			want: map[string]any{"a": json.Number("1"), "b": list("x")}},
		"ROSJsonText": {reason: "A Json default written as text.", ros: true, yaml: "!Ref JText", json: `{"Ref": "JText"}`, want: map[string]any{"k": "v"}},
		"ROSList":     {reason: "A CommaDelimitedList.", ros: true, yaml: "!Ref Zones", json: `{"Ref": "Zones"}`, want: list("z1", "z2")},
		"ROSPseudo": {reason: "ALIYUN pseudo parameters; TenantId is the account.", ros: true,
			yaml: "[!Ref ALIYUN::StackName, !Ref ALIYUN::StackId, !Ref ALIYUN::Region, !Ref ALIYUN::AccountId, !Ref ALIYUN::TenantId]",
			json: `[{"Ref": "ALIYUN::StackName"}, {"Ref": "ALIYUN::StackId"}, {"Ref": "ALIYUN::Region"}, {"Ref": "ALIYUN::AccountId"}, {"Ref": "ALIYUN::TenantId"}]`,
			want: list("demo", opts.StackID, "us-east-1", "123456789012", "123456789012")},
		"ROSNoValue": {reason: "ALIYUN::NoValue removes a list element.", ros: true, yaml: "[a, !Ref ALIYUN::NoValue]",
			json: `["a", {"Ref": "ALIYUN::NoValue"}]`, want: list("a")},
		"ROSStr":     {reason: "Fn::Str.", ros: true, yaml: "!Str 12", json: `{"Fn::Str": 12}`, want: "12"},
		"ROSReplace": {reason: "Fn::Replace.", ros: true, yaml: `!Replace [{"$a": "1", "$b": !Ref N}, "$a+$b"]`, json: `{"Fn::Replace": [{"$a": "1", "$b": {"Ref": "N"}}, "$a+$b"]}`, want: "1+3"},
		"ROSBase64":  {reason: "Fn::Base64Encode.", ros: true, yaml: "!Base64Encode hi", json: `{"Fn::Base64Encode": "hi"}`, want: "aGk="},
		"ROSDecode":  {reason: "Fn::Base64Decode.", ros: true, yaml: "!Base64Decode aGk=", json: `{"Fn::Base64Decode": "aGk="}`, want: "hi"},
		"ROSLength":  {reason: "Fn::Length.", ros: true, yaml: "!Length [a, b, c]", json: `{"Fn::Length": ["a", "b", "c"]}`, want: json.Number("3")},
		"ROSJoin":    {reason: "Fn::Join with a number parameter.", ros: true, yaml: `!Join ["-", [!Ref N, x]]`, json: `{"Fn::Join": ["-", [{"Ref": "N"}, "x"]]}`, want: "3-x"},
		"ROSSub":     {reason: "Fn::Sub with a number and a pseudo parameter.", ros: true, yaml: `!Sub "${N}-${ALIYUN::Region}"`, json: `{"Fn::Sub": "${N}-${ALIYUN::Region}"}`, want: "3-us-east-1"},
		"ROSIf":      {reason: "Fn::If with Fn::Equals over a number.", ros: true, yaml: "!If [Big, yes, no]", json: `{"Fn::If": ["Big", "yes", "no"]}`, want: "yes"},
		"ROSGetAtt": {reason: "A nested ROS attribute.", ros: true, yaml: "!GetAtt my_res.Outputs.Key", json: `{"Fn::GetAtt": ["my_res", "Outputs.Key"]}`,
			s: known, want: "v"},
		"ROSSelectSplit": {reason: "Fn::Select and Fn::Split.", ros: true, yaml: `!Select [1, !Split [",", "p,q"]]`, json: `{"Fn::Select": [1, {"Fn::Split": [",", "p,q"]}]}`, want: "q"},
		"ROSSecret":      {reason: "A NoEcho value stays secret through Fn::Replace.", ros: true, yaml: `!Replace [{x: !Ref Pass}, "x!"]`, json: `{"Fn::Replace": [{"x": {"Ref": "Pass"}}, "x!"]}`, want: value.Mask},
	}
	for name, tc := range cases {
		for _, form := range []string{"yaml", "json"} {
			t.Run(name+"/"+form, func(t *testing.T) {
				src, file := tc.yaml, "intrinsics."+form
				if form == "json" {
					src = tc.json
				}
				if tc.ros {
					file = "ros." + form
				}
				s := tc.s
				if s == nil {
					s = scope{}
				}
				v, diags := evalP(t, file, src, s)
				if diags.HasErrors() {
					t.Fatalf("%s\nP = %s: %v", tc.reason, src, diags.Err())
				}
				if diff := cmp.Diff(tc.want, value.Masked(v, "<unknown>")); diff != "" {
					t.Errorf("%s\nP = %s: -want +got\n%s", tc.reason, src, diff)
				}
			})
		}
	}
}

func TestSecretsPropagate(t *testing.T) {
	cases := map[string]struct {
		reason, src string
	}{
		"Ref":     {reason: "The parameter itself.", src: "!Ref Pass"},
		"Sub":     {reason: "Interpolated.", src: `!Sub "x${Pass}"`},
		"Join":    {reason: "Joined.", src: `!Join ["-", [a, !Ref Pass]]`},
		"Split":   {reason: "Split: every element.", src: `!Select [0, !Split ["n", !Ref Pass]]`},
		"Base64":  {reason: "Encoded.", src: "!Base64 {Ref: Pass}"},
		"If":      {reason: "Chosen by a condition.", src: "!If [IsProd, !Ref Pass, x]"},
		"Nested":  {reason: "Inside a map.", src: "{A: {B: !Ref Pass}}"},
		"Unknown": {reason: "Joined with an unknown value: unknown and still secret.", src: `!Join ["", [!Ref Pass, !Ref Res]]`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v, diags := evalP(t, "intrinsics.yaml", tc.src, scope{})
			if diags.HasErrors() {
				t.Fatalf("%s\n%v", tc.reason, diags.Err())
			}
			if !value.IsSecret(v) {
				t.Errorf("%s\nP = %s: %#v is not marked sensitive", tc.reason, tc.src, v)
			}
		})
	}
}

func TestEvalErrors(t *testing.T) {
	// P's value starts at line 24, column 10 of testdata/intrinsics.yaml.
	at := func(col int, path, summary string) diag.Diagnostic {
		return diag.Errorf(diag.Range{Filename: "intrinsics.yaml", Line: 24, Column: col}, "Resources.Test.Properties.P"+path, "%s", summary)
	}
	cases := map[string]struct {
		reason, src string
		s           scope
		want        diag.Diagnostics
	}{
		"UnknownFunction": {reason: "Fn::Foo is no function.", src: `{"Fn::Foo": 1}`,
			want: diag.Diagnostics{at(10, "", "unknown function Fn::Foo")}},
		"UnknownTag": {reason: "Nor is !Foo.", src: `!Foo 1`,
			want: diag.Diagnostics{at(10, "", "unknown function Fn::Foo")}},
		"ROSOnly": {reason: "ROS functions are not CloudFormation's.", src: `!Str 1`,
			want: diag.Diagnostics{at(10, "", "Fn::Str is a ROS function; it is not available in CloudFormation templates")}},
		"JoinShape": {reason: "Fn::Join takes two arguments.", src: `!Join [","]`,
			want: diag.Diagnostics{at(10, ".Fn::Join", "Fn::Join takes [Delimiter, [Values]]")}},
		"JoinNotList": {reason: "The values must be a list.", src: `{"Fn::Join": [",", "x"]}`,
			want: diag.Diagnostics{at(29, ".Fn::Join[1]", "value must be a list, not string")}},
		"JoinMap": {reason: "An element must be a scalar.", src: `!Join [",", [a, {b: c}]]`,
			want: diag.Diagnostics{at(26, ".Fn::Join[1][1]", "value must be a string, not a map")}},
		"SelectRange": {reason: "The index is checked.", src: `!Select [3, [a]]`,
			want: diag.Diagnostics{at(19, ".Fn::Select[0]", "index 3 is out of range: the list has 1 elements")}},
		"SplitShape": {reason: "Fn::Split takes [Delimiter, String].", src: `!Split x`,
			want: diag.Diagnostics{at(10, ".Fn::Split", "Fn::Split takes [Delimiter, String]")}},
		"GetAttShape": {reason: "A GetAtt string needs a dot.", src: `!GetAtt Res`,
			want: diag.Diagnostics{at(10, ".Fn::GetAtt", `Fn::GetAtt takes "Resource.Attribute" or [Resource, Attribute]`)}},
		"RefUnknown": {reason: "Ref names nothing.", src: `!Ref Nope`,
			want: diag.Diagnostics{at(10, ".Ref", "Nope is not a parameter, pseudo parameter or resource of this template")}},
		"SubUnknown": {reason: "${Nope} names nothing.", src: `!Sub "${Nope.Arn}"`,
			want: diag.Diagnostics{at(10, ".Fn::Sub", "Nope is not a parameter, pseudo parameter or resource of this template")}},
		"SubList": {reason: "A list parameter cannot be interpolated.", src: `!Sub "${Zones}"`,
			want: diag.Diagnostics{at(10, ".Fn::Sub", "${Zones} is a list; join it with Fn::Join to use it in Fn::Sub")}},
		"IfUndeclared": {reason: "Fn::If names an undeclared condition.", src: `!If [Nope, a, b]`,
			want: diag.Diagnostics{at(15, ".Fn::If[0]", "condition Nope is not declared in Conditions")}},
		"FindInMapKey": {reason: "A missing key is named.", src: `!FindInMap [Sizes, prod, Huge]`,
			want: diag.Diagnostics{at(35, ".Fn::FindInMap[2]", "mapping Sizes.prod has no key Huge")}},
		"AndShape": {reason: "Fn::And takes 2 to 10 conditions.", src: `!And [!Condition IsProd]`,
			want: diag.Diagnostics{at(10, ".Fn::And", "Fn::And takes a list of 2 to 10 conditions")}},
		"Several": {reason: "Every problem of one value is reported.", src: `[!Ref Nope, {"Fn::Foo": 1}]`,
			want: diag.Diagnostics{at(11, "[0].Ref", "Nope is not a parameter, pseudo parameter or resource of this template"),
				at(22, "[1]", "unknown function Fn::Foo")}},
		"AttributeMissing": {reason: "Against known outputs, a missing attribute is named with those there are.", src: `!GetAtt Res.Nope`, s: known,
			want: diag.Diagnostics{at(10, ".Fn::GetAtt", `resource Res has no attribute "Nope"; its attributes are: Arn, List, Nested, Token`)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := tc.s
			if s == nil {
				s = scope{}
			}
			_, diags := evalP(t, "intrinsics.yaml", tc.src, s)
			if diff := cmp.Diff(tc.want, diags); diff != "" {
				t.Errorf("%s\nP = %s: -want +got\n%s", tc.reason, tc.src, diff)
			}
		})
	}
}

func TestEvalConcurrently(t *testing.T) {
	// The engine evaluates resources in parallel; run with -race.
	v, diags := evalP(t, "intrinsics.yaml", "x", scope{})
	if diags.HasErrors() || v.AsString() != "x" {
		t.Fatalf("setup: %v %v", v, diags)
	}
	b, _ := os.ReadFile("testdata/intrinsics.yaml")
	st, _ := Parse("intrinsics.yaml", []byte(strings.Replace(string(b), "__P__", "!If [IsProd, !Sub '${Res.Arn}', !Ref AWS::NoValue]", 1)), opts)
	done := make(chan cty.Value)
	for range 4 {
		go func() {
			v, _ := st.Resource("Test").Properties.Eval(known)
			done <- v
		}()
	}
	for range 4 {
		if v := <-done; !v.GetAttr("P").RawEquals(cty.StringVal("arn:res")) {
			t.Errorf("P = %#v", v)
		}
	}
}
