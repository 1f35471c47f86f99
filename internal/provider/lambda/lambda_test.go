package lambda

import (
	"context"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/value"
)

func props(m map[string]cty.Value) cty.Value { return cty.ObjectVal(m) }

var good = map[string]cty.Value{
	"Runtime": cty.StringVal("python3.12"), "Handler": cty.StringVal("index.handler"),
	"Code":        cty.ObjectVal(map[string]cty.Value{"ZipFile": cty.StringVal("def handler(e, c): pass")}),
	"Environment": cty.ObjectVal(map[string]cty.Value{"Variables": cty.ObjectVal(map[string]cty.Value{"KEY": cty.StringVal("s3cret")})}),
}

func with(k string, v cty.Value) cty.Value {
	m := map[string]cty.Value{}
	for kk, vv := range good {
		m[kk] = vv
	}
	if v == cty.NilVal {
		delete(m, k)
	} else {
		m[k] = v
	}
	return props(m)
}

// TestCheck: what a template's AWS::Lambda::Function may hold, each refusal naming the
// property.
func TestCheck(t *testing.T) {
	cases := map[string]struct {
		reason string
		props  cty.Value
		want   string // substring of the failures, "" for none
	}{
		"Good":       {"inline Python code with a handler of index", props(good), ""},
		"NoCode":     {"Code is required", with("Code", cty.NilVal), "Code: Code is required"},
		"S3":         {"code in a bucket is refused", with("Code", cty.ObjectVal(map[string]cty.Value{"S3Bucket": cty.StringVal("b")})), "inline code only"},
		"Handler":    {"inline code is index", with("Handler", cty.StringVal("main.handler")), "index.FUNCTION"},
		"Runtime":    {"java is not run", with("Runtime", cty.StringVal("java21")), "cairn runs nodejs and python3"},
		"Timeout":    {"Lambda's range", with("Timeout", cty.NumberIntVal(901)), "Timeout must be a whole number from 1 to 900"},
		"TimeoutStr": {"a number as text is a number", with("Timeout", cty.StringVal("30")), ""},
		"Unknown":    {"a preview's unknowns are not errors", with("Code", cty.UnknownVal(cty.DynamicPseudoType)), ""},
	}
	p := New(nil)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resp, err := p.Check(context.Background(), provider.CheckRequest{Resource: provider.Resource{Type: awsFunction.name}, Props: tc.props})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range resp.Failures {
				got = append(got, f.Property+": "+f.Reason)
			}
			text := strings.Join(got, "; ")
			if (tc.want == "") != (text == "") || !strings.Contains(text, tc.want) {
				t.Errorf("%s\nfailures %q, want %q", tc.reason, text, tc.want)
			}
		})
	}
}

// TestCheckMarksEnvironmentSecret: the values the engine stores and shows are secret.
func TestCheckMarksEnvironmentSecret(t *testing.T) {
	resp, err := New(nil).Check(context.Background(), provider.CheckRequest{Resource: provider.Resource{Type: awsFunction.name}, Props: props(good)})
	if err != nil {
		t.Fatal(err)
	}
	env := resp.Props.GetAttr("Environment").GetAttr("Variables")
	if !value.IsSecret(env) || value.IsSecret(resp.Props.GetAttr("Handler")) {
		t.Errorf("Environment.Variables secret: %v, Handler secret: %v; want only the former", value.IsSecret(env), value.IsSecret(resp.Props.GetAttr("Handler")))
	}
}

// TestGeneratedName: CloudFormation's form, at most 64 valid characters, stable per call and
// different per stack.
func TestGeneratedName(t *testing.T) {
	res := provider.Resource{StackName: strings.Repeat("s", 80), StackKey: "k1", Name: strings.Repeat("L", 80)}
	n := generatedName(res, "tok")
	if len(n) > 64 || !validName.MatchString(n) || n != generatedName(res, "tok") {
		t.Errorf("generatedName = %q: want a stable valid name of at most 64 characters", n)
	}
	res.StackKey = "k2"
	if generatedName(res, "tok") == n {
		t.Errorf("two stacks got the same name %q", n)
	}
}

// TestInlineCodeHasTheModules: the response modules sit where require and import find them.
func TestInlineCodeHasTheModules(t *testing.T) {
	for kind, want := range map[string]string{"nodejs": "node_modules/cfn-response/index.js", "python": "cfnresponse.py"} {
		b, err := inlineCode(kind, "x")
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s: archive lacks %s (err %v)", kind, want, err)
		}
	}
}
