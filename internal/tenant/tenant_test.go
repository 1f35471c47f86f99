package tenant

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	cases := map[string]struct {
		reason, src string
		want        map[string]string
		wantErr     string
	}{
		"TrailingComment": {reason: "Only whole lines are comments: a # after the pair makes four fields.",
			src:     "acme tok-a1\n  globex tok-g # not a comment\n",
			wantErr: "want \"TENANT TOKEN\""},
		"Good": {reason: "Each token maps to its tenant.",
			src:  "# tenants\n\nacme  tok-a1\nacme\ttok-a2\nglobex tok-g\n",
			want: map[string]string{"tok-a1": "acme", "tok-a2": "acme", "tok-g": "globex"}},
		"OneField":  {reason: "A line needs both fields.", src: "acme\n", wantErr: "x:1:"},
		"BadName":   {reason: "Tenant names are restricted.", src: "a/b tok\n", wantErr: "invalid tenant name"},
		"SharedTok": {reason: "A token names one tenant.", src: "a tok\nb tok\n", wantErr: "x:2: the token of tenant b"},
		"Empty":     {reason: "An empty file has no tenants.", src: "", want: map[string]string{}},
		"SameTwice": {reason: "Repeating a pair is harmless.", src: "a tok\na tok\n", want: map[string]string{"tok": "a"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Parse("x", strings.NewReader(tc.src))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s\nParse: error %v, want one containing %q", tc.reason, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nParse: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nParse: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestContext(t *testing.T) {
	ctx := context.Background()
	if got := From(ctx); got != Default {
		t.Errorf("From(empty) = %q, want %q", got, Default)
	}
	if got := From(With(ctx, "acme")); got != "acme" {
		t.Errorf("From(With(acme)) = %q", got)
	}
}

func TestRoleOn(t *testing.T) {
	c := Caller{Tenant: "a", Role: Viewer, Grants: []Grant{{Stack: "web-*", Role: Deployer}, {Stack: "db", Role: Viewer}}}
	for name, want := range map[string]string{"web-1": Deployer, "db": Viewer, "other": Viewer, "web": Viewer} {
		if got := c.RoleOn(name); got != want {
			t.Errorf("RoleOn(%s) = %s, want %s", name, got, want)
		}
	}
	if !Covers(Admin, Deployer) || Covers(Viewer, Deployer) || Covers(Admin, "root") {
		t.Error("Covers orders viewer < deployer < admin and refuses unknown roles")
	}
	if (Caller{Tenant: Default, Role: Deployer}).ServerAdmin() || !(Caller{Tenant: Default, Role: Admin}).ServerAdmin() {
		t.Error("ServerAdmin is tenant default's admin only")
	}
}
