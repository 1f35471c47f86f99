package function

import (
	"strings"
	"testing"
)

func TestParseName(t *testing.T) {
	cases := map[string]struct {
		token, want, err string
	}{
		"LambdaARN":          {token: "arn:aws:lambda:us-east-1:123456789012:function:greeter", want: "greeter"},
		"LambdaVersion":      {token: "arn:aws:lambda:us-east-1:123456789012:function:greeter:7", want: "greeter"},
		"LambdaAlias":        {token: "arn:aws:lambda:eu-west-1:123456789012:function:greeter:live", want: "greeter"},
		"LambdaLatest":       {token: "arn:aws:lambda:eu-west-1:1:function:greeter:$LATEST", want: "greeter"},
		"LambdaChina":        {token: "arn:aws-cn:lambda:cn-north-1:123456789012:function:my_fn", want: "my_fn"},
		"LambdaNoName":       {token: "arn:aws:lambda:us-east-1:1:function", err: "Lambda ARN is malformed"},
		"LambdaLayer":        {token: "arn:aws:lambda:us-east-1:1:layer:x:1", err: "Lambda ARN is malformed"},
		"LambdaEmptyQual":    {token: "arn:aws:lambda:us-east-1:1:function:f:", err: "malformed"},
		"LambdaTooLong":      {token: "arn:aws:lambda:us-east-1:1:function:f:1:2", err: "malformed"},
		"LambdaBadName":      {token: "arn:aws:lambda:us-east-1:1:function:a.b", err: "not a valid function name"},
		"FC":                 {token: "acs:fc:cn-hangzhou:123456:services/svc/functions/greeter", want: "greeter"},
		"FCQualifiedService": {token: "acs:fc:cn-hangzhou:123456:services/svc.LATEST/functions/greeter", want: "greeter"},
		"FC3":                {token: "acs:fc:cn-hangzhou:123456:functions/greeter", want: "greeter"},
		"FC3Qualifier":       {token: "acs:fc:cn-hangzhou:123456:functions/greeter:prod", want: "greeter"},
		"FCNoService":        {token: "acs:fc:cn-hangzhou:123456:services//functions/greeter", err: "Function Compute token is malformed"},
		"FCNoFunction":       {token: "acs:fc:cn-hangzhou:123456:services/svc", err: "malformed"},
		"FCShort":            {token: "acs:fc:cn-hangzhou", err: "malformed"},
		"FunctionGraph":      {token: "urn:fss:cn-north-4:0123456789abcdef:function:default:greeter:latest", want: "greeter"},
		"FunctionGraphNoVer": {token: "urn:fss:cn-north-4:0123456789abcdef:function:default:greeter", want: "greeter"},
		"FunctionGraphBad":   {token: "urn:fss:cn-north-4:p:trigger:default:greeter:1", err: "FunctionGraph URN is malformed"},
		"Bare":               {token: "greeter", want: "greeter"},
		"Other":              {token: "sqs:q", err: "not a function token"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseName(tc.token)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("ParseName(%q): %v", tc.token, err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("ParseName(%q) = %q, %v; want an error containing %q", tc.token, got, err, tc.err)
			case got != tc.want:
				t.Errorf("ParseName(%q) = %q, want %q", tc.token, got, tc.want)
			}
		})
	}
}

func TestIsToken(t *testing.T) {
	for tok, want := range map[string]bool{
		"arn:aws:lambda:r:1:function:f":     true,
		"arn:aws:sns:r:1:t":                 false,
		"acs:fc:r:1:services/s/functions/f": true,
		"acs:mns:r:1:queues/q":              false,
		"urn:fss:r:p:function:default:f:1":  true,
		"https://example.com/fn":            false,
	} {
		if got := IsToken(tok); got != want {
			t.Errorf("IsToken(%q) = %v, want %v", tok, got, want)
		}
	}
}
