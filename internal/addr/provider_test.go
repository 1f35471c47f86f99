package addr

import "testing"

func TestParseProvider(t *testing.T) {
	for _, tc := range []struct{ in, want, display, err string }{
		{in: "time", want: "registry.terraform.io/hashicorp/time", display: "hashicorp/time"},
		{in: "HashiCorp/time", want: "registry.terraform.io/hashicorp/time", display: "hashicorp/time"},
		{in: "example.com/acme/thing", want: "example.com/acme/thing", display: "example.com/acme/thing"},
		{in: "huawei.com/private-provider/MyProv", want: "huawei.com/private-provider/MyProv", display: "huawei.com/private-provider/MyProv"},
		{in: "a/b/c/d", err: `invalid provider source "a/b/c/d": expected [hostname/]namespace/type`},
		{in: "acme/-x", err: `invalid provider source "acme/-x": "-x" must be letters, digits, dashes and underscores, starting and ending with a letter or digit`},
		{in: "acme/terraform-provider-x", err: `invalid provider source "acme/terraform-provider-x": the type must not include the "terraform-provider-" prefix`},
	} {
		p, err := ParseProvider(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParseProvider(%q) error = %v, want %s", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || p.String() != tc.want || p.ForDisplay() != tc.display {
			t.Errorf("ParseProvider(%q) = %v, %q, %v; want %s, %s", tc.in, p, p.ForDisplay(), err, tc.want, tc.display)
		}
	}
}
