package cfn

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func rng(file string, line, col int) diag.Range {
	return diag.Range{Filename: file, Line: line, Column: col}
}

func TestDetect(t *testing.T) {
	cases := map[string]struct {
		reason, src string
		want        template.Dialect
		ok          bool
	}{
		"AWS":        {reason: "AWSTemplateFormatVersion.", src: `AWSTemplateFormatVersion: "2010-09-09"`, want: template.CloudFormation, ok: true},
		"Resources":  {reason: "Resources alone is enough.", src: `{"Resources": {}}`, want: template.CloudFormation, ok: true},
		"ROS":        {reason: "ROSTemplateFormatVersion wins.", src: "Resources: {}\nROSTemplateFormatVersion: '2015-09-01'", want: template.ROS, ok: true},
		"Other":      {reason: "Some other YAML.", src: "apiVersion: v1\nkind: Pod", want: template.CloudFormation},
		"BrokenROS":  {reason: "Broken syntax still detected, so Parse can report it.", src: `{"ROSTemplateFormatVersion": `, want: template.ROS, ok: true},
		"NotATmpl":   {reason: "A list.", src: "- a\n- b", want: template.CloudFormation},
		"EmptyInput": {reason: "Nothing.", src: "", want: template.CloudFormation},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := Detect([]byte(tc.src))
			if diff := cmp.Diff([]any{tc.want, tc.ok}, []any{got, ok}); diff != "" {
				t.Errorf("%s\nDetect(%q): -want +got\n%s", tc.reason, tc.src, diff)
			}
		})
	}
}

// Summaries of the stack's parts that cmp can compare.
type (
	paramSum struct {
		Name, Type, Description string
		NoEcho                  bool
		Value                   any
		Range                   diag.Range
	}
	resourceSum struct {
		Name, Type                          string
		DependsOn                           []string
		DeletionPolicy, UpdateReplacePolicy template.Policy
		Range                               diag.Range
	}
	outputSum struct {
		Name, Description string
		Value             any
		Range             diag.Range
	}
)

func TestStack(t *testing.T) {
	o := opts
	o.Parameters = map[string]string{"Pass": "hunter2"}
	st, diags := Parse("stack.yaml", readTestdata(t, "stack.yaml"), o)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	if st.Dialect != template.CloudFormation || st.Description != "A stack with a bit of everything." {
		t.Errorf("Dialect, Description = %q, %q", st.Dialect, st.Description)
	}
	f := "stack.yaml"
	var params []paramSum
	for _, p := range st.Parameters {
		params = append(params, paramSum{p.Name, p.Type, p.Description, p.NoEcho, value.Masked(p.Value, "?"), p.Range})
	}
	wantParams := []paramSum{
		{"Env", "String", "Where it runs.", false, "dev", rng(f, 4, 3)},
		{"Pass", "String", "", true, value.Mask, rng(f, 8, 3)},
		{"Zones", "CommaDelimitedList", "", false, []any{"a", "b"}, rng(f, 9, 3)},
	}
	if diff := cmp.Diff(wantParams, params); diff != "" {
		t.Errorf("Parameters, in declaration order: -want +got\n%s", diff)
	}
	var res []resourceSum
	for _, r := range st.Resources {
		res = append(res, resourceSum{r.Name, r.Type, r.DependsOn, r.DeletionPolicy, r.UpdateReplacePolicy, r.Range})
	}
	wantRes := []resourceSum{
		{"Queue", "Custom::Queue", nil, template.Retain, template.Snapshot, rng(f, 13, 3)},
		{"Worker", "Custom::Worker", []string{"Api", "Queue"}, template.Delete, template.Delete, rng(f, 27, 3)},
		{"Api", "Custom::Api", nil, template.Delete, template.Delete, rng(f, 34, 3)},
	}
	if diff := cmp.Diff(wantRes, res); diff != "" {
		t.Errorf("Resources (Backup's condition is false; Worker's references, sorted and deduplicated): -want +got\n%s", diff)
	}
	var outs []outputSum
	for _, o := range st.Outputs {
		v, diags := o.Value.Eval(scope{"Worker": {ID: cty.StringVal("w-1")}})
		if diags.HasErrors() {
			t.Fatal(diags.Err())
		}
		outs = append(outs, outputSum{o.Name, o.Description, value.Masked(v, "?"), o.Range})
	}
	wantOuts := []outputSum{
		{"WorkerId", "The worker.", "w-1", rng(f, 39, 3)},
		{"Zones", "", "a,b", rng(f, 46, 3)},
	}
	if diff := cmp.Diff(wantOuts, outs); diff != "" {
		t.Errorf("Outputs, in template order without BackupId: -want +got\n%s", diff)
	}
	q := st.Resource("Queue")
	gotRanges := map[string]diag.Range{}
	for _, p := range []string{"", "Name", "Tags", "Tags.0", "Tags.0.Value", "Tags[0].Value", "Tags.0.Nope", "Nope"} {
		gotRanges[p] = q.PropertyRange(p)
	}
	wantRanges := map[string]diag.Range{"": rng(f, 18, 5), "Name": rng(f, 19, 13), "Tags": rng(f, 21, 9), "Tags.0": rng(f, 21, 11),
		"Tags.0.Value": rng(f, 22, 18), "Tags[0].Value": rng(f, 22, 18), "Tags.0.Nope": rng(f, 21, 11), "Nope": rng(f, 18, 5)}
	if diff := cmp.Diff(wantRanges, gotRanges); diff != "" {
		t.Errorf("Queue.PropertyRange: -want +got\n%s", diff)
	}
	w, diags := st.Resource("Worker").Properties.Eval(scope{})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	if diff := cmp.Diff([]string{"QueueArn", "Url"}, value.Keys(w)); diff != "" {
		t.Errorf("Worker's properties (Backup dropped by AWS::NoValue): -want +got\n%s", diff)
	}
}

func TestAllErrorsAtOnce(t *testing.T) {
	f := "testdata/all-errors.yaml"
	_, diags := Parse(f, readTestdata(t, "all-errors.yaml"), opts)
	e := func(line, col int, path, summary string) diag.Diagnostic {
		return diag.Errorf(rng(f, line, col), path, "%s", summary)
	}
	want := diag.Diagnostics{
		e(3, 3, "Parameters.Size", "parameter Size: must be at most MaxValue 10"),
		e(7, 3, "Parameters.Env", "parameter Env: must be one of the AllowedValues [a, b]"),
		e(8, 3, "Parameters.Missing", "parameter Missing has no value: give one with --parameter Missing=VALUE or a Default"),
		e(9, 1, "Resourcez", "unknown template section Resourcez"),
		e(11, 21, "Conditions.UsesRes.Fn::Equals[0].Ref", "a condition cannot refer to resource Db"),
		e(15, 21, "Resources.Db.DeletionPolicy", `invalid policy "Keep": use Delete, Retain or Snapshot`),
		e(16, 22, "Resources.Db.DependsOn[1]", "DependsOn names Ghost, which is not a resource of this template"),
		e(19, 25, "Resources.Db.Properties.Name.Fn::Join[1]", "value must be a list, not string"),
		e(20, 13, "Resources.Db.Properties.Peer.Fn::GetAtt", "Nope is not a parameter, pseudo parameter or resource of this template"),
		e(21, 12, "Resources.Db.Properties.Bad", "unknown function Fn::Foo"),
		e(22, 7, "Resources.Db.Properties.Bad", `duplicate key "Bad"`),
		e(23, 3, "Resources.Web", "resource Web needs a Type"),
		e(25, 3, "Resources.my_web", `invalid logical id "my_web": use letters and digits only`),
		e(27, 32, "Outputs.Url.Exprt", "unknown output attribute Exprt"),
	}
	if diff := cmp.Diff(want, diags); diff != "" {
		t.Errorf("every problem, in source order: -want +got\n%s", diff)
	}
	if got := diags[7].Error(); got != "testdata/all-errors.yaml:19:25: Resources.Db.Properties.Name.Fn::Join[1]: value must be a list, not string" {
		t.Errorf("rendered: %s", got)
	}
}

func TestCycles(t *testing.T) {
	cases := map[string]struct {
		reason, file string
		want         diag.Diagnostics
	}{
		"Three": {reason: "Ref, GetAtt and DependsOn edges; the cycle is named from the first resource of the template.", file: "cycle.json",
			want: diag.Diagnostics{diag.Errorf(rng("cycle.json", 4, 3), "Resources.A", "dependency cycle: A -> C -> B -> A")}},
		"Several": {reason: "Every cycle is reported, one per group of resources, self-references included; Fine only depends on one.", file: "cycles.yaml",
			want: diag.Diagnostics{
				diag.Errorf(rng("cycles.yaml", 2, 3), "Resources.Self", "dependency cycle: Self -> Self"),
				diag.Errorf(rng("cycles.yaml", 5, 3), "Resources.A", "dependency cycle: A -> B -> A"),
				diag.Errorf(rng("cycles.yaml", 7, 3), "Resources.C", "dependency cycle: C -> D -> E -> C"),
			}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st, diags := Parse(tc.file, readTestdata(t, tc.file), opts)
			if st != nil {
				t.Errorf("%s\nParse returned a stack despite errors", tc.reason)
			}
			if diff := cmp.Diff(tc.want, diags); diff != "" {
				t.Errorf("%s\n-want +got\n%s", tc.reason, diff)
			}
		})
	}
}

// parseOne parses src (YAML, or JSON) and returns the error and warning summaries as
// "path: summary" lines.
func parseOne(src string, o Options) (*template.Stack, []string) {
	st, diags := Parse("t.yaml", []byte(src), o)
	var got []string
	for _, d := range diags {
		got = append(got, d.Path+": "+d.Summary)
	}
	return st, got
}

func TestParameters(t *testing.T) {
	cases := map[string]struct {
		reason, decl, given string
		ros, validate       bool
		want                any      // P's value (masked) when there is no error
		errs                []string // else the diagnostics
	}{
		"Given":         {reason: "A given value wins over the Default.", decl: "{Type: String, Default: a}", given: "b", want: "b"},
		"Default":       {reason: "Else the Default.", decl: "{Type: String, Default: a}", want: "a"},
		"NumberDefault": {reason: "A Number default written as a number is a string in CloudFormation.", decl: "{Type: Number, Default: 1.50}", want: "1.50"},
		"Missing": {reason: "No value and no Default.", decl: "{Type: String}",
			errs: []string{"Parameters.P: parameter P has no value: give one with --parameter P=VALUE or a Default"}},
		"Validate":      {reason: "When validating, a missing value is unknown.", decl: "{Type: String}", validate: true, want: "?"},
		"AllowedValues": {reason: "AllowedValues.", decl: "{Type: String, AllowedValues: [a, b]}", given: "c", errs: []string{"Parameters.P: parameter P: must be one of the AllowedValues [a, b]"}},
		"AllowedPattern": {reason: "AllowedPattern matches the whole value.", decl: "{Type: String, AllowedPattern: '[a-z]+'}", given: "ab1",
			errs: []string{"Parameters.P: parameter P: must match the AllowedPattern [a-z]+"}},
		"PatternOK":  {reason: "A full match passes.", decl: "{Type: String, AllowedPattern: '[a-z]+|[0-9]'}", given: "7", want: "7"},
		"MinLength":  {reason: "MinLength.", decl: "{Type: String, MinLength: 3}", given: "ab", errs: []string{"Parameters.P: parameter P: must be at least MinLength 3 characters long"}},
		"MaxLength":  {reason: "MaxLength counts characters.", decl: "{Type: String, MaxLength: 2}", given: "héé", errs: []string{"Parameters.P: parameter P: must be at most MaxLength 2 characters long"}},
		"MinValue":   {reason: "MinValue.", decl: "{Type: Number, MinValue: 5}", given: "4", errs: []string{"Parameters.P: parameter P: must be at least MinValue 5"}},
		"MaxValue":   {reason: "MaxValue.", decl: "{Type: Number, MaxValue: 5}", given: "5.5", errs: []string{"Parameters.P: parameter P: must be at most MaxValue 5"}},
		"NotNumber":  {reason: "A Number must be one.", decl: "{Type: Number}", given: "x", errs: []string{"Parameters.P: parameter P: must be a number"}},
		"NumberList": {reason: "Each element of a List<Number> is checked.", decl: "{Type: List<Number>, MaxValue: 10}", given: "1, 20", errs: []string{"Parameters.P: parameter P: must be at most MaxValue 10"}},
		"ListValues": {reason: "Each element of a CommaDelimitedList is checked against AllowedValues.", decl: "{Type: CommaDelimitedList, AllowedValues: [a, b]}", given: "a,b", want: []any{"a", "b"}},
		"Constraint": {reason: "ConstraintDescription leads the message.", decl: "{Type: Number, MaxValue: 1, ConstraintDescription: 'one at most'}", given: "2",
			errs: []string{"Parameters.P: parameter P: one at most (must be at most MaxValue 1)"}},
		"Secret": {reason: "A NoEcho value is never quoted, and is marked.", decl: "{Type: String, NoEcho: true, AllowedValues: [x]}", given: "hunter2",
			errs: []string{"Parameters.P: parameter P: must be one of the AllowedValues [x]"}},
		"SecretOK":   {reason: "A NoEcho value is marked.", decl: "{Type: String, NoEcho: true}", given: "hunter2", want: value.Mask},
		"AWSType":    {reason: "AWS-specific types are strings.", decl: "{Type: 'List<AWS::EC2::Subnet::Id>'}", given: "s-1,s-2", want: []any{"s-1", "s-2"}},
		"BadPattern": {reason: "An invalid pattern is reported where it is written.", decl: "{Type: String, AllowedPattern: '(', Default: x}", errs: []string{"Parameters.P.AllowedPattern: invalid AllowedPattern: error parsing regexp: missing closing ): `(`"}},
		"BadType": {reason: "An unknown Type.", decl: "{Type: Strin}",
			errs: []string{`Parameters.P.Type: parameter P: unsupported Type "Strin": use String, Number, CommaDelimitedList, List<Number>, or an AWS-specific type such as AWS::EC2::KeyPair::KeyName`}},
		"SSM": {reason: "SSM parameter types need a parameter store.", decl: "{Type: 'AWS::SSM::Parameter::Value<String>'}",
			errs: []string{`Parameters.P.Type: parameter P: unsupported Type "AWS::SSM::Parameter::Value<String>": use String, Number, CommaDelimitedList, List<Number>, or an AWS-specific type such as AWS::EC2::KeyPair::KeyName`}},
		"BooleanInCFN": {reason: "Boolean is ROS only.", decl: "{Type: Boolean, Default: true}",
			errs: []string{`Parameters.P.Type: parameter P: unsupported Type "Boolean": use String, Number, CommaDelimitedList, List<Number>, or an AWS-specific type such as AWS::EC2::KeyPair::KeyName`}},
		"NoType":      {reason: "Type is required.", decl: "{Default: x}", errs: []string{"Parameters.P: parameter P needs a Type"}},
		"UnknownAttr": {reason: "Unknown attributes.", decl: "{Type: String, Default: x, Defualt: y}", errs: []string{"Parameters.P.Defualt: unknown parameter attribute Defualt"}},
		"ROSNumber":   {reason: "ROS Numbers are numbers.", ros: true, decl: "{Type: Number, MinValue: 1}", given: "2.5", want: "2.5"},
		"ROSBoolean":  {reason: "ROS Booleans.", ros: true, decl: "{Type: Boolean}", given: "false", want: "false"},
		"ROSBadBool":  {reason: "ROS Booleans are checked.", ros: true, decl: "{Type: Boolean}", given: "maybe", errs: []string{"Parameters.P: parameter P: must be true or false"}},
		"ROSJson":     {reason: "ROS Json is decoded.", ros: true, decl: "{Type: Json}", given: `[1, "a"]`, want: []any{"1", "a"}},
		"ROSBadJson":  {reason: "ROS Json is checked.", ros: true, decl: "{Type: Json}", given: `{`, errs: []string{"Parameters.P: parameter P: must be JSON"}},
		"ROSLength":   {reason: "Constraints apply in ROS too.", ros: true, decl: "{Type: String, MaxLength: 1, Label: Name}", given: "ab", errs: []string{"Parameters.P: parameter P: must be at most MaxLength 1 characters long"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			head := "AWSTemplateFormatVersion: '2010-09-09'\n"
			if tc.ros {
				head = "ROSTemplateFormatVersion: '2015-09-01'\n"
			}
			src := head + "Parameters:\n  P: " + tc.decl + "\nResources:\n  R: {Type: Custom::R}\n"
			o := opts
			o.Validate = tc.validate
			if tc.given != "" {
				o.Parameters = map[string]string{"P": tc.given}
			}
			st, errs := parseOne(src, o)
			if diff := cmp.Diff(tc.errs, errs); diff != "" {
				t.Errorf("%s\ndiagnostics: -want +got\n%s", tc.reason, diff)
			}
			if st == nil || tc.errs != nil {
				return
			}
			got := value.Masked(value.Stringify(st.Parameters[0].Value), "?")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nvalue (stringified): -want +got\n%s", tc.reason, diff)
			}
		})
	}
}

func TestConditions(t *testing.T) {
	const head = "Parameters:\n  Env: {Type: String, Default: dev}\nConditions:\n  IsProd: !Equals [!Ref Env, prod]\n  IsDev: !Not [!Condition IsProd]\n"
	cases := map[string]struct {
		reason, src string
		validate    bool
		resources   []string // the stack's resources, when there is no error
		errs        []string
	}{
		"Dropped": {reason: "A resource whose condition is false is left out.",
			src: "Resources:\n  A: {Type: X, Condition: IsProd}\n  B: {Type: X, Condition: IsDev}\n", resources: []string{"B"}},
		"UntakenBranch": {reason: "A left-out resource may be named in a branch not taken, and is no dependency.",
			src: "Resources:\n  A: {Type: X, Condition: IsProd}\n  B: {Type: X, Properties: {P: !If [IsProd, !Ref A, x]}}\n", resources: []string{"B"}},
		"RefDropped": {reason: "Naming a left-out resource elsewhere is an error, as in CloudFormation.",
			src:  "Resources:\n  A: {Type: X, Condition: IsProd}\n  B: {Type: X, Properties: {P: !GetAtt A.Arn}}\n",
			errs: []string{"Resources.B.Properties.P.Fn::GetAtt: resource A is not created (its condition IsProd is false), so it cannot be referenced here"}},
		"DependsOnDropped": {reason: "So is depending on one.",
			src:  "Resources:\n  A: {Type: X, Condition: IsProd}\n  B: {Type: X, DependsOn: A}\n",
			errs: []string{"Resources.B.DependsOn: DependsOn names A, which is not a resource of this template (it is left out because its condition IsProd is false)"}},
		"Undeclared": {reason: "A resource's condition must be declared.",
			src: "Resources:\n  A: {Type: X, Condition: Nope}\n", errs: []string{"Resources.A.Condition: condition Nope is not declared in Conditions"}},
		"Loop": {reason: "Conditions cannot depend on themselves; reported once.",
			src:  "Conditions:\n  L1: !Not [!Condition L2]\n  L2: !Not [!Condition L1]\nResources:\n  A: {Type: X, Condition: L1}\n",
			errs: []string{"Conditions.L2.Fn::Not[0].Condition: condition L1 depends on itself"}},
		"NotBoolean": {reason: "A condition must be true or false.",
			src: "Conditions:\n  C: !Ref Env\nResources:\n  A: {Type: X}\n", errs: []string{"Conditions.C: value must be a condition (true or false)"}},
		"Mapping": {reason: "Conditions may use mappings.",
			src:       "Mappings:\n  M: {dev: {On: 'true'}}\nConditions:\n  C: !Equals [!FindInMap [M, !Ref Env, On], 'true']\nResources:\n  A: {Type: X, Condition: C}\n",
			resources: []string{"A"}},
		"ValidateBoth": {reason: "Without parameter values conditions are unknown: resources stay, both branches count.", validate: true,
			src:       "Parameters:\n  E: {Type: String}\nConditions:\n  C: !Equals [!Ref E, x]\nResources:\n  A: {Type: X, Condition: C}\n  B: {Type: X, Properties: {P: !If [C, !Ref A, y]}}\n",
			resources: []string{"A", "B"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			src := tc.src
			switch {
			case !strings.Contains(src, "Conditions:"):
				src = head + src
			case !strings.Contains(src, "Parameters:"):
				src = "Parameters:\n  Env: {Type: String, Default: dev}\n" + src
			}
			o := opts
			o.Validate = tc.validate
			st, errs := parseOne(src, o)
			if diff := cmp.Diff(tc.errs, errs); diff != "" {
				t.Errorf("%s\ndiagnostics: -want +got\n%s", tc.reason, diff)
			}
			if st == nil {
				return
			}
			var names []string
			for _, r := range st.Resources {
				names = append(names, r.Name)
			}
			if diff := cmp.Diff(tc.resources, names); diff != "" {
				t.Errorf("%s\nresources: -want +got\n%s", tc.reason, diff)
			}
		})
	}
}

func TestTemplateErrors(t *testing.T) {
	cases := map[string]struct {
		reason, src string
		ros         bool
		given       map[string]string
		want        []string
	}{
		"NoResources":    {reason: "Resources is required.", src: "Description: x\n", want: []string{"Resources: a template needs at least one resource in Resources"}},
		"EmptyResources": {reason: "And must not be empty.", src: "Resources: {}\n", want: []string{"Resources: a template needs at least one resource in Resources"}},
		"Transform":      {reason: "Macros are not run.", src: "Transform: AWS::Serverless-2016-10-31\nResources: {A: {Type: X}}\n", want: []string{"Transform: template section Transform is not supported by cairn"}},
		"Rules":          {reason: "Rules are only a warning.", src: "Rules: {}\nResources: {A: {Type: X}}\n", want: []string{"Rules: Rules are not checked by cairn"}},
		"Version":        {reason: "The format version is checked.", src: "AWSTemplateFormatVersion: '2011-01-01'\nResources: {A: {Type: X}}\n", want: []string{`AWSTemplateFormatVersion: AWSTemplateFormatVersion must be "2010-09-09"`}},
		"NotAMap":        {reason: "A template is a map.", src: "- a\n", want: []string{": a template must be a map of sections"}},
		"Syntax":         {reason: "Syntax errors name the line.", src: "Resources:\n  A: {Type: X\n", want: []string{": invalid template syntax: did not find expected ',' or '}'"}},
		"DuplicateJSON":  {reason: "Duplicate keys in JSON.", src: `{"Resources": {"A": {"Type": "X"}, "A": {"Type": "Y"}}}`, want: []string{`Resources.A: duplicate key "A"`}},
		"BadAttribute":   {reason: "Unknown resource attributes.", src: "Resources:\n  A: {Type: X, Propertis: {}}\n", want: []string{"Resources.A.Propertis: unknown resource attribute Propertis"}},
		"BadProperties":  {reason: "Properties is a map.", src: "Resources:\n  A: {Type: X, Properties: [1]}\n", want: []string{"Resources.A.Properties: Properties must be a map"}},
		"BadType":        {reason: "Type is a name.", src: "Resources:\n  A: {Type: [X]}\n", want: []string{"Resources.A.Type: the Type of resource A must be a resource type name"}},
		"NameClash":      {reason: "A resource cannot share a parameter's name.", src: "Parameters: {A: {Type: String, Default: x}}\nResources:\n  A: {Type: X}\n", want: []string{"Resources.A: resource A has the name of a parameter"}},
		"BadDependsOn":   {reason: "DependsOn takes names.", src: "Resources:\n  A: {Type: X, DependsOn: {B: 1}}\n", want: []string{"Resources.A.DependsOn: DependsOn takes a resource's logical id or a list of them"}},
		"NoValue":        {reason: "An output needs a Value.", src: "Resources: {A: {Type: X}}\nOutputs:\n  O: {Description: x}\n", want: []string{"Outputs.O: output O needs a Value"}},
		"Export":         {reason: "Export is accepted and ignored.", src: "Resources: {A: {Type: X}}\nOutputs:\n  O: {Value: !Ref A, Export: {Name: o}}\n"},
		"Undeclared": {reason: "A given parameter must be declared.", src: "Resources: {A: {Type: X}}\n", given: map[string]string{"Z": "1", "Y": "2"},
			want: []string{"Parameters: parameter Y is given but the template does not declare it", "Parameters: parameter Z is given but the template does not declare it"}},
		"ROSIds":      {reason: "ROS allows _ and - in logical ids.", ros: true, src: "Resources:\n  my_res-1: {Type: X}\n"},
		"ROSBadId":    {reason: "But not dots.", ros: true, src: "Resources:\n  my.res: {Type: X}\n", want: []string{`Resources.my.res: invalid logical id "my.res": use letters, digits, '_' and '-' only`}},
		"MappingForm": {reason: "Mappings are maps of maps.", src: "Mappings: {M: {a: 1}}\nResources: {A: {Type: X}}\n", want: []string{"Mappings.M.a: a mapping's top-level key must hold a map of second-level keys"}},
		"Policy":      {reason: "RetainExceptOnCreate is read as Retain.", src: "Resources: {A: {Type: X, DeletionPolicy: RetainExceptOnCreate}}\n"},
		"NullProps":   {reason: "Properties with nothing below is empty.", src: "Resources:\n  A:\n    Type: X\n    Properties:\n"},
		"IAMCondition": {reason: "A map with a single Condition key is a map outside conditions.",
			src: "Resources:\n  A: {Type: X, Properties: {Statement: [{Condition: {StringEquals: {a: b}}}]}}\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			src := tc.src
			if tc.ros {
				src = "ROSTemplateFormatVersion: '2015-09-01'\n" + src
			}
			o := opts
			o.Parameters = tc.given
			_, got := parseOne(src, o)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want +got\n%s", tc.reason, diff)
			}
		})
	}
}

func TestSyntaxErrorLine(t *testing.T) {
	cases := map[string]struct {
		reason, src string
		want        diag.Range
	}{
		"FlowMap":     {reason: "yaml.v3 parser errors count lines from 0.", src: "a: 1\nb: {c: 2\nd: 3\n", want: rng("t.yaml", 2, 0)},
		"JSON":        {reason: "A JSON syntax error.", src: "{\"a\": 1,\n \"b\": 2,,\n}", want: rng("t.yaml", 2, 0)},
		"Indent":      {reason: "yaml.v3 scanner errors count from 1.", src: "a: 1\nb: 2\n c: 3\n", want: rng("t.yaml", 3, 0)},
		"Tab":         {reason: "A tab in YAML.", src: "a: 1\nb:\n\t- x\n", want: rng("t.yaml", 3, 0)},
		"JSONWithTab": {reason: "Tabs are white space in JSON.", src: "{\"Resources\":\t{\"A\": {\"Type\": \"X\"}}}"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got diag.Range
			if _, diags := Parse("t.yaml", []byte(tc.src), opts); diags.HasErrors() {
				got = diags[0].Range
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want +got\n%s", tc.reason, diff)
			}
		})
	}
}

func TestPartition(t *testing.T) {
	o := opts
	o.Region = "cn-north-1"
	st, diags := Parse("t.yaml", []byte("Resources:\n  A: {Type: X, Properties: {P: !Sub '${AWS::Partition} ${AWS::URLSuffix}'}}\n"), o)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	v, _ := st.Resources[0].Properties.Eval(scope{})
	if got := v.GetAttr("P").AsString(); got != "aws-cn amazonaws.com.cn" {
		t.Errorf("in cn-north-1: %q, want aws-cn amazonaws.com.cn", got)
	}
}
