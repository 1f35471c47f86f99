package customresource

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
)

func TestParseToken(t *testing.T) {
	cases := map[string]struct {
		token string
		want  serviceToken
		err   string // substring; "" = valid
	}{
		"HTTPS":             {token: "https://h.example/x", want: serviceToken{url: "https://h.example/x"}},
		"HTTP":              {token: "http://127.0.0.1:8080/", want: serviceToken{url: "http://127.0.0.1:8080/"}},
		"Web":               {token: "web:https://h/x", want: serviceToken{url: "https://h/x", web: true}},
		"WebSync":           {token: "web[sync]:http://h", want: serviceToken{url: "http://h", web: true, sync: true}},
		"WebIdempotent":     {token: "web[idempotent]:http://h", want: serviceToken{url: "http://h", web: true, idempotent: true}},
		"WebBoth":           {token: "web[sync,idempotent]:http://h", want: serviceToken{url: "http://h", web: true, sync: true, idempotent: true}},
		"WebBothReversed":   {token: "web[idempotent, sync]:http://h", want: serviceToken{url: "http://h", web: true, sync: true, idempotent: true}},
		"WebUnknownOption":  {token: "web[fast]:http://h", err: `option "fast" is unknown`},
		"WebUnclosed":       {token: "web[sync:http://h", err: "not closed"},
		"WebNotHTTP":        {token: "web:ftp://h", err: "http:// or https://"},
		"NoHost":            {token: "https://", err: "not a valid absolute URL"},
		"Lambda":            {token: "arn:aws:lambda:us-east-1:123456789012:function:f", want: serviceToken{function: "arn:aws:lambda:us-east-1:123456789012:function:f"}},
		"LambdaChina":       {token: "arn:aws-cn:lambda:cn-north-1:123456789012:function:f", want: serviceToken{function: "arn:aws-cn:lambda:cn-north-1:123456789012:function:f"}},
		"SNS":               {token: "arn:aws:sns:us-east-1:123456789012:topic", err: "an SNS topic ARN; topic and queue tokens"},
		"FunctionCompute2":  {token: "acs:fc:cn-hangzhou:123:services/s/functions/f", want: serviceToken{function: "acs:fc:cn-hangzhou:123:services/s/functions/f"}},
		"FunctionCompute3":  {token: "acs:fc:cn-hangzhou:123:functions/f", want: serviceToken{function: "acs:fc:cn-hangzhou:123:functions/f"}},
		"FunctionGraph":     {token: "urn:fss:cn-north-4:p:function:default:f:latest", want: serviceToken{function: "urn:fss:cn-north-4:p:function:default:f:latest"}},
		"MNSQueue":          {token: "acs:mns:cn-hangzhou:123:queues/q", err: "MNS"},
		"MNSTopic":          {token: "acs:mns:cn-hangzhou:123:topics/t", err: "supported forms are"},
		"Unrecognised":      {token: "sqs://q", err: "not a form cairn recognises"},
		"OtherARN":          {token: "arn:aws:sqs:us-east-1:1:q", err: "not a form cairn recognises"},
		"Empty":             {token: "", err: "empty"},
		"NoCredentialsEcho": {token: "ftp://user:hunter2@h", err: "recognises"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseToken(tc.token)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("parseToken(%q): %v", tc.token, err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("parseToken(%q): error %v, want one containing %q", tc.token, err, tc.err)
			case err != nil && strings.Contains(err.Error(), "hunter2"):
				t.Fatalf("parseToken(%q): error %v quotes the token", tc.token, err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(serviceToken{})); diff != "" {
				t.Errorf("parseToken(%q): -want +got:\n%s", tc.token, diff)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	withType := func(r provider.Resource, typ string) provider.Resource { r.Type = typ; return r }
	str := cty.StringVal
	cases := map[string]struct {
		reason string
		res    provider.Resource
		props  cty.Value
		want   []provider.CheckFailure
	}{
		"Valid": {
			reason: "A URL token with a ServiceTimeout is fine.",
			res:    cfnResource, props: tokenProps("https://h", map[string]cty.Value{"ServiceTimeout": str("3600"), "Anything": cty.True}),
		},
		"UnknownToken": {
			reason: "An unknown token during a preview is not a failure.",
			res:    cfnResource, props: obj(map[string]cty.Value{"ServiceToken": cty.UnknownVal(cty.String)}),
		},
		"UnknownProps": {
			reason: "Wholly unknown properties are not a failure.",
			res:    cfnResource, props: cty.DynamicVal,
		},
		"MissingToken": {
			reason: "ServiceToken is required.",
			res:    cfnResource, props: obj(map[string]cty.Value{"X": str("y")}),
			want: []provider.CheckFailure{{Property: "ServiceToken", Reason: "ServiceToken is required"}},
		},
		"NoProperties": {
			reason: "No properties at all lacks a ServiceToken.",
			res:    cfnResource, props: cty.NullVal(cty.DynamicPseudoType),
			want: []provider.CheckFailure{{Property: "ServiceToken", Reason: "ServiceToken is required"}},
		},
		"TokenNotString": {
			reason: "ServiceToken must be a string.",
			res:    cfnResource, props: obj(map[string]cty.Value{"ServiceToken": cty.NumberIntVal(1)}),
			want: []provider.CheckFailure{{Property: "ServiceToken", Reason: "ServiceToken must be a string"}},
		},
		"LambdaToken": {
			reason: "A Lambda ARN naming a registered function is fine.",
			res:    cfnResource, props: tokenProps("arn:aws:lambda:us-east-1:1:function:f", nil),
		},
		"UnknownFunction": {
			reason: "A function token naming no registered function lists the registered ones.",
			res:    cfnResource, props: tokenProps("arn:aws:lambda:us-east-1:1:function:nope", nil),
			want: []provider.CheckFailure{{Property: "ServiceToken", Reason: "ServiceToken is a Lambda function ARN that cairn " +
				"cannot use: function \"nope\" is not registered; registered functions: f"}},
		},
		"SNSToken": {
			reason: "Topic tokens are refused with the supported forms listed.",
			res:    cfnResource, props: tokenProps("arn:aws:sns:us-east-1:1:t", nil),
			want: []provider.CheckFailure{{Property: "ServiceToken", Reason: "ServiceToken is an SNS topic ARN; topic and queue tokens " +
				"(SNS, MNS) are not supported; point the ServiceToken at a cairn function instead; supported forms are a cairn " +
				"function's Lambda ARN, Function Compute token or FunctionGraph URN, an http:// or https:// URL, web:URL, " +
				"web[sync]:URL, web[idempotent]:URL and web[sync,idempotent]:URL"}},
		},
		"ServiceTimeoutRange": {
			reason: "ServiceTimeout is 1 to 3600.",
			res:    cfnResource, props: tokenProps("https://h", map[string]cty.Value{"ServiceTimeout": cty.NumberIntVal(3601)}),
			want: []provider.CheckFailure{{Property: "ServiceTimeout", Reason: "ServiceTimeout must be from 1 to 3600 seconds, not 3601"}},
		},
		"ServiceTimeoutZero": {
			reason: "ServiceTimeout is at least 1.",
			res:    cfnResource, props: tokenProps("https://h", map[string]cty.Value{"ServiceTimeout": str("0")}),
			want: []provider.CheckFailure{{Property: "ServiceTimeout", Reason: "ServiceTimeout must be from 1 to 3600 seconds, not 0"}},
		},
		"ServiceTimeoutFraction": {
			reason: "ServiceTimeout is an integer.",
			res:    cfnResource, props: tokenProps("https://h", map[string]cty.Value{"ServiceTimeout": cty.NumberFloatVal(1.5)}),
			want: []provider.CheckFailure{{Property: "ServiceTimeout", Reason: "ServiceTimeout must be an integer from 1 to 3600, not 1.5"}},
		},
		"ServiceTimeoutText": {
			reason: "ServiceTimeout is a number.",
			res:    cfnResource, props: tokenProps("https://h", map[string]cty.Value{"ServiceTimeout": str("soon")}),
			want: []provider.CheckFailure{{Property: "ServiceTimeout", Reason: `ServiceTimeout must be an integer from 1 to 3600, not "soon"`}},
		},
		"TypeNameTooLong": {
			reason: "A CloudFormation type name is at most 60 characters.",
			res:    withType(cfnResource, "Custom::"+strings.Repeat("a", 61)), props: tokenProps("https://h", nil),
			want: []provider.CheckFailure{{Reason: `the custom resource type name "` + strings.Repeat("a", 61) + `" is 61 characters long; the limit is 60`}},
		},
		"TypeNameCharset": {
			reason: "Type names use letters, digits and _@-.",
			res:    withType(cfnResource, "Custom::My.Thing"), props: tokenProps("https://h", nil),
			want: []provider.CheckFailure{{Reason: `the custom resource type name "My.Thing" contains '.'; use letters, digits and _@-`}},
		},
		"TypeNameOK": {
			reason: "Every allowed character, 60 long.",
			res:    withType(cfnResource, "Custom::a_b@c-D9"+strings.Repeat("x", 44)), props: tokenProps("https://h", nil),
		},
		"ROSTypeName68": {
			reason: "ROS allows 68 characters.",
			res:    withType(rosResource, "Custom::"+strings.Repeat("a", 68)), props: tokenProps("web:https://h", nil),
		},
		"ROSTypeInCFN": {
			reason: "ALIYUN::ROS::CustomResource belongs to ROS templates.",
			res:    withType(cfnResource, "ALIYUN::ROS::CustomResource"), props: tokenProps("https://h", nil),
			want: []provider.CheckFailure{{Reason: "ALIYUN::ROS::CustomResource is a ROS type; CloudFormation templates use AWS::CloudFormation::CustomResource or Custom::<Name>"}},
		},
		"ROSValid": {
			reason: "ROS takes ServiceToken, Timeout and Parameters.",
			res:    rosResource, props: tokenProps("web[sync]:https://h", map[string]cty.Value{"Timeout": cty.NumberIntVal(43200),
				"Parameters": obj(map[string]cty.Value{"A": cty.NumberIntVal(1)})}),
		},
		"ROSTimeoutRange": {
			reason: "ROS Timeout is 1 to 43200.",
			res:    rosResource, props: tokenProps("web:https://h", map[string]cty.Value{"Timeout": cty.NumberIntVal(43201)}),
			want: []provider.CheckFailure{{Property: "Timeout", Reason: "Timeout must be from 1 to 43200 seconds, not 43201"}},
		},
		"ROSOtherProperty": {
			reason: "Other ROS properties are refused, pointing at Parameters.",
			res:    rosResource, props: tokenProps("web:https://h", map[string]cty.Value{"Size": cty.NumberIntVal(1), "ServiceTimeout": str("5")}),
			want: []provider.CheckFailure{
				{Property: "ServiceTimeout", Reason: "ALIYUN::ROS::CustomResource takes only ServiceToken, Timeout and Parameters; put ServiceTimeout under Parameters to send it to the handler"},
				{Property: "Size", Reason: "ALIYUN::ROS::CustomResource takes only ServiceToken, Timeout and Parameters; put Size under Parameters to send it to the handler"},
			},
		},
		"ROSParametersNotMap": {
			reason: "Parameters is a map.",
			res:    rosResource, props: tokenProps("web:https://h", map[string]cty.Value{"Parameters": str("x")}),
			want: []provider.CheckFailure{{Property: "Parameters", Reason: "Parameters must be a map"}},
		},
		"ROSFunctionCompute": {
			reason: "FC tokens resolve through the registered functions.",
			res:    rosResource, props: tokenProps("acs:fc:cn-hangzhou:1:functions/f", nil),
		},
		"ROSFunctionComputeMalformed": {
			reason: "A malformed FC token says why.",
			res:    rosResource, props: tokenProps("acs:fc:cn-hangzhou:1:services/s", nil),
			want: []provider.CheckFailure{{Property: "ServiceToken", Reason: "ServiceToken is a Function Compute function that " +
				"cairn cannot use: malformed"}},
		},
	}
	p := New(Config{Store: newMemStore(), Key: []byte("k"), Functions: fakeInvoker{"f": nil}})
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resp, err := p.Check(context.Background(), provider.CheckRequest{Resource: tc.res, Props: tc.props})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, resp.Failures); diff != "" {
				t.Errorf("%s\nCheck failures: -want +got:\n%s", tc.reason, diff)
			}
			if !resp.Props.RawEquals(tc.props) {
				t.Errorf("%s\nCheck changed the properties", tc.reason)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	str, num := cty.StringVal, cty.NumberIntVal
	base := map[string]cty.Value{"ServiceToken": str("https://h"), "Count": num(3), "Flag": cty.True}
	with := func(m map[string]cty.Value, k string, v cty.Value) cty.Value {
		out := map[string]cty.Value{}
		for kk, vv := range m {
			out[kk] = vv
		}
		if v == cty.NilVal {
			delete(out, k)
		} else {
			out[k] = v
		}
		return obj(out)
	}
	rosBase := map[string]cty.Value{"ServiceToken": str("web:https://h"), "Timeout": num(60),
		"Parameters": obj(map[string]cty.Value{"Count": num(3)})}
	cases := map[string]struct {
		reason   string
		res      provider.Resource
		old, new cty.Value
		want     provider.DiffResponse
	}{
		"Same": {reason: "Identical properties need no request.", res: cfnResource, old: obj(base), new: obj(base)},
		"StringifiedEqual": {
			reason: "CloudFormation compares stringified values: 3 and \"3\", true and \"true\" are the same.",
			res:    cfnResource, old: obj(base), new: with(map[string]cty.Value{"ServiceToken": str("https://h"), "Count": str("3")}, "Flag", str("true")),
		},
		"ValueChanged": {
			reason: "A changed value is an Update that may replace.",
			res:    cfnResource, old: obj(base), new: with(base, "Count", num(4)),
			want: provider.DiffResponse{Changed: true, ChangedKeys: []string{"Count"}, MayReplace: true},
		},
		"AddedAndRemoved": {
			reason: "Added and removed keys are listed, sorted.",
			res:    cfnResource, old: obj(base), new: with(with(base, "Flag", cty.NilVal).AsValueMap(), "Alpha", str("a")),
			want: provider.DiffResponse{Changed: true, ChangedKeys: []string{"Alpha", "Flag"}, MayReplace: true},
		},
		"NullIsAbsent": {
			reason: "A null property is the same as an absent one (it is never sent).",
			res:    cfnResource, old: obj(base), new: with(base, "Gone", cty.NullVal(cty.String)),
		},
		"ServiceTokenChanged": {
			reason: "A new ServiceToken is an Update (sent to the new token).",
			res:    cfnResource, old: obj(base), new: with(base, "ServiceToken", str("https://other")),
			want: provider.DiffResponse{Changed: true, ChangedKeys: []string{"ServiceToken"}, MayReplace: true},
		},
		"UnknownValue": {
			reason: "A property not known yet may change.",
			res:    cfnResource, old: obj(base), new: with(base, "Count", cty.UnknownVal(cty.Number)),
			want: provider.DiffResponse{Changed: true, ChangedKeys: []string{"Count"}, MayReplace: true},
		},
		"UnknownProps": {
			reason: "Wholly unknown properties may change.",
			res:    cfnResource, old: obj(base), new: cty.DynamicVal,
			want: provider.DiffResponse{Changed: true, MayReplace: true},
		},
		"ROSTimeoutOnly": {
			reason: "ROS Timeout is not part of the request: changing only it sends nothing.",
			res:    rosResource, old: obj(rosBase), new: with(rosBase, "Timeout", num(120)),
		},
		"ROSTypesKept": {
			reason: "ROS keeps JSON types, so 3 and \"3\" differ.",
			res:    rosResource, old: obj(rosBase), new: with(rosBase, "Parameters", obj(map[string]cty.Value{"Count": str("3")})),
			want: provider.DiffResponse{Changed: true, ChangedKeys: []string{"Parameters"}, MayReplace: true},
		},
	}
	p := New(Config{Store: newMemStore(), Key: []byte("k")})
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := p.Diff(context.Background(), provider.DiffRequest{Resource: tc.res, ID: "x", OldProps: tc.old, NewProps: tc.new})
			if err != nil {
				t.Fatal(err)
			}
			// Custom resources plan nothing: Planned stays unset.
			if got.Planned != cty.NilVal {
				t.Errorf("Planned = %#v, want none", got.Planned)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(provider.DiffResponse{}, "Planned")); diff != "" {
				t.Errorf("%s\nDiff: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
