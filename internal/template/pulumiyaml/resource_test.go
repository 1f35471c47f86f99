package pulumiyaml

import "testing"

func TestCanonicalType(t *testing.T) {
	for in, want := range map[string]string{
		"simple:Resource":                "simple:index:Resource",
		"simple:index:Resource":          "simple:index:Resource",
		"random:index/randomId:RandomId": "random:index/randomId:RandomId",
		"pulumi:providers:simple":        "pulumi:providers:simple",
		"aws:s3/bucket:Bucket":           "aws:s3/bucket:Bucket",
	} {
		if got := canonicalType(in); got != want {
			t.Errorf("canonicalType(%q) = %q, want %q", in, got, want)
		}
	}
}
