package customresource

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/value"
)

// TestRequestShapes runs each request type through the whole flow and compares the request
// object the handler received with the exact JSON CloudFormation or ROS would send.
// $TOKEN is the handler's URL, $URL the expected ResponseURL.
func TestRequestShapes(t *testing.T) {
	cfnProps := func(token string) cty.Value {
		return obj(map[string]cty.Value{
			"ServiceToken":   cty.StringVal(token),
			"ServiceTimeout": cty.NumberIntVal(120),
			"Count":          cty.NumberIntVal(4),
			"Flag":           cty.True,
			"Ratio":          cty.NumberFloatVal(1.5),
			"ApiKey":         value.Secret(cty.StringVal("s3cr3t")),
			"Empty":          cty.StringVal(""),
			"Gone":           cty.NullVal(cty.String),
			"List":           cty.TupleVal([]cty.Value{cty.NumberIntVal(1), cty.StringVal("a"), cty.False}),
			"Nested": obj(map[string]cty.Value{"Deep": cty.TupleVal([]cty.Value{
				obj(map[string]cty.Value{"N": cty.NumberIntVal(14), "On": cty.True})})}),
		})
	}
	const cfnWant = `"ResourceProperties":{"ServiceToken":"$TOKEN","ServiceTimeout":"120","Count":"4","Flag":"true",
		"Ratio":"1.5","ApiKey":"s3cr3t","Empty":"","List":["1","a","false"],"Nested":{"Deep":[{"N":"14","On":"true"}]}}`
	oldCFNProps := func(token string) cty.Value {
		return obj(map[string]cty.Value{
			"ServiceToken": cty.StringVal(token),
			"Count":        cty.NumberIntVal(3),
			"List":         cty.TupleVal([]cty.Value{cty.NumberIntVal(1)}),
		})
	}
	rosProps := func(token string) cty.Value {
		return obj(map[string]cty.Value{
			"ServiceToken": cty.StringVal("web:" + token),
			"Timeout":      cty.StringVal("120"),
			"Parameters": obj(map[string]cty.Value{
				"Year": cty.NumberIntVal(2023),
				"Flag": cty.True,
				"List": cty.TupleVal([]cty.Value{cty.NumberIntVal(1), cty.NumberIntVal(2)}),
				"Map":  obj(map[string]cty.Value{"K": cty.StringVal("v")}),
			}),
		})
	}

	cases := map[string]struct {
		reason string
		kind   string
		res    provider.Resource
		props  func(token string) cty.Value
		old    func(token string) cty.Value
		wait   time.Duration // the timeout in the ResponseURL; default 120 s
		want   string
	}{
		"CloudFormationCreate": {
			reason: "A Create has a top-level ServiceToken, no PhysicalResourceId and every scalar stringified; nulls are dropped and secrets are sent in clear.",
			kind:   reqCreate, res: cfnResource, props: cfnProps,
			want: `{"RequestType":"Create","ServiceToken":"$TOKEN","ResponseURL":"$URL",
				"StackId":"arn:aws:cloudformation:us-east-1:123456789012:stack/s/guid","RequestId":"tok-1",
				"LogicalResourceId":"Thing","ResourceType":"Custom::Thing",` + cfnWant + `}`,
		},
		"CloudFormationUpdate": {
			reason: "An Update carries PhysicalResourceId and OldResourceProperties, both property sets stringified.",
			kind:   reqUpdate, res: cfnResource, props: cfnProps, old: oldCFNProps,
			want: `{"RequestType":"Update","ServiceToken":"$TOKEN","ResponseURL":"$URL",
				"StackId":"arn:aws:cloudformation:us-east-1:123456789012:stack/s/guid","RequestId":"tok-1",
				"LogicalResourceId":"Thing","ResourceType":"Custom::Thing","PhysicalResourceId":"phys-1",` + cfnWant + `,
				"OldResourceProperties":{"ServiceToken":"$TOKEN","Count":"3","List":["1"]}}`,
		},
		"CloudFormationDelete": {
			reason: "A Delete carries PhysicalResourceId and the current properties, no OldResourceProperties.",
			kind:   reqDelete, res: cfnResource, props: cfnProps,
			want: `{"RequestType":"Delete","ServiceToken":"$TOKEN","ResponseURL":"$URL",
				"StackId":"arn:aws:cloudformation:us-east-1:123456789012:stack/s/guid","RequestId":"tok-1",
				"LogicalResourceId":"Thing","ResourceType":"Custom::Thing","PhysicalResourceId":"phys-1",` + cfnWant + `}`,
		},
		"CloudFormationGenericType": {
			reason: "AWS::CloudFormation::CustomResource is sent as its own ResourceType.",
			kind:   reqCreate, props: oldCFNProps, wait: time.Hour,
			res: func() provider.Resource { r := cfnResource; r.Type = "AWS::CloudFormation::CustomResource"; return r }(),
			want: `{"RequestType":"Create","ServiceToken":"$TOKEN","ResponseURL":"$URL",
				"StackId":"arn:aws:cloudformation:us-east-1:123456789012:stack/s/guid","RequestId":"tok-1",
				"LogicalResourceId":"Thing","ResourceType":"AWS::CloudFormation::CustomResource",
				"ResourceProperties":{"ServiceToken":"$TOKEN","Count":"3","List":["1"]}}`,
		},
		"ROSCreate": {
			reason: "A ROS Create sends Parameters as ResourceProperties with JSON types kept, the ROS extras, both intranet URL names and no top-level ServiceToken.",
			kind:   reqCreate, res: rosResource, props: rosProps,
			want: `{"RequestType":"Create","RequestId":"tok-1","ResponseURL":"$URL","IntranetResponseURL":"$URL",
				"InnerResponseURL":"$URL","ResourceType":"ALIYUN::ROS::CustomResource","LogicalResourceId":"Thing",
				"StackId":"7f0d3c2e-0000-4000-8000-000000000001","StackName":"s","ResourceOwnerId":"1234567890",
				"CallerId":"1234567890","RegionId":"cn-hangzhou",
				"ResourceProperties":{"Year":2023,"Flag":true,"List":[1,2],"Map":{"K":"v"}}}`,
		},
		"ROSUpdate": {
			reason: "A ROS Update's OldResourceProperties is the old Parameters; no Parameters at all is an empty object.",
			kind:   reqUpdate, res: rosResource, props: rosProps,
			old: func(token string) cty.Value {
				return obj(map[string]cty.Value{"ServiceToken": cty.StringVal("web:" + token)})
			},
			want: `{"RequestType":"Update","RequestId":"tok-1","ResponseURL":"$URL","IntranetResponseURL":"$URL",
				"InnerResponseURL":"$URL","ResourceType":"ALIYUN::ROS::CustomResource","LogicalResourceId":"Thing",
				"StackId":"7f0d3c2e-0000-4000-8000-000000000001","StackName":"s","ResourceOwnerId":"1234567890",
				"CallerId":"1234567890","RegionId":"cn-hangzhou","PhysicalResourceId":"phys-1",
				"ResourceProperties":{"Year":2023,"Flag":true,"List":[1,2],"Map":{"K":"v"}},
				"OldResourceProperties":{}}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := newRig(t)
			h := &fakeHandler{t: t, respond: succeed(nil)}
			token := r.handle("/handler", h)
			c := call{kind: tc.kind, res: tc.res, token: "tok-1", physical: "phys-1", props: tc.props(token)}
			if tc.old != nil {
				c.oldProps = tc.old(token)
			}
			o, err := r.p.run(context.Background(), c)
			if err != nil || o.diags.HasErrors() {
				t.Fatalf("%s\nrun: %v %v", tc.reason, err, o.diags)
			}
			wait := tc.wait
			if wait == 0 {
				wait = 120 * time.Second
			}
			wantURL := r.p.responseURL("tok-1", testNow.Add(wait))
			want := strings.NewReplacer("$TOKEN", token, "$URL", wantURL).Replace(tc.want)
			got := h.requests()
			if len(got) != 1 {
				t.Fatalf("%s\nhandler got %d requests, want 1", tc.reason, len(got))
			}
			if diff := cmp.Diff(decodeJSON(t, want), got[0]); diff != "" {
				t.Errorf("%s\nrequest object: -want +got:\n%s", tc.reason, diff)
			}
			if h.methods[0] != http.MethodPost {
				t.Errorf("%s\nmethod = %s, want POST", tc.reason, h.methods[0])
			}
			if ct := h.headers[0].Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s\nContent-Type = %q, want application/json", tc.reason, ct)
			}
		})
	}
}

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return m
}

// TestResponseURL pins the URL format: base + /v1/responses/ + id + expires + signature.
func TestResponseURL(t *testing.T) {
	p := New(Config{Store: newMemStore(), Key: []byte("k"), ResponseURL: "https://localhost/"})
	got := p.responseURL("a/b c", time.Unix(1700000000, 0))
	want := "https://localhost/v1/responses/a%2Fb%20c?expires=1700000000&signature=" + p.sign("a/b c", "1700000000")
	if got != want {
		t.Errorf("responseURL: got %s, want %s", got, want)
	}
	if sig := p.sign("a/b c", "1700000000"); len(sig) != 64 {
		t.Errorf("signature %q is not hex SHA-256", sig)
	}
}

// TestTimeouts covers which timeout a call waits for.
func TestTimeouts(t *testing.T) {
	cases := map[string]struct {
		reason  string
		res     provider.Resource
		token   string
		props   map[string]cty.Value
		timeout time.Duration
		want    time.Duration
	}{
		"CFNDefault":      {reason: "CloudFormation waits an hour by default.", res: cfnResource, token: "https://h", want: time.Hour},
		"CFNProperty":     {reason: "ServiceTimeout as a string.", res: cfnResource, token: "https://h", props: map[string]cty.Value{"ServiceTimeout": cty.StringVal("90")}, want: 90 * time.Second},
		"CFNNumber":       {reason: "ServiceTimeout as a number.", res: cfnResource, token: "https://h", props: map[string]cty.Value{"ServiceTimeout": cty.NumberIntVal(5)}, want: 5 * time.Second},
		"EngineOverrides": {reason: "The engine's Timeout wins.", res: cfnResource, token: "https://h", props: map[string]cty.Value{"ServiceTimeout": cty.NumberIntVal(5)}, timeout: time.Minute, want: time.Minute},
		"ROSDefault":      {reason: "ROS waits 60 s by default.", res: rosResource, token: "web:https://h", want: time.Minute},
		"ROSSyncDefault":  {reason: "ROS web[sync] waits 10 s by default.", res: rosResource, token: "web[sync]:https://h", want: 10 * time.Second},
		"ROSProperty":     {reason: "ROS Timeout may exceed CloudFormation's hour.", res: rosResource, token: "web[sync]:https://h", props: map[string]cty.Value{"Timeout": cty.NumberIntVal(7200)}, want: 2 * time.Hour},
		"ROSIgnoresCFN":   {reason: "ServiceTimeout means nothing to ROS.", res: rosResource, token: "web:https://h", props: map[string]cty.Value{"ServiceTimeout": cty.NumberIntVal(5)}, want: time.Minute},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			attrs := map[string]cty.Value{"ServiceToken": cty.StringVal(tc.token)}
			for k, v := range tc.props {
				attrs[k] = v
			}
			c := call{res: tc.res, props: obj(attrs), timeout: tc.timeout}
			_, tok, err := c.serviceToken()
			if err != nil {
				t.Fatal(err)
			}
			if got := timeoutFor(c, tok); got != tc.want {
				t.Errorf("%s\ntimeoutFor: got %s, want %s", tc.reason, got, tc.want)
			}
		})
	}
}
