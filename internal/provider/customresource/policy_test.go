package customresource

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/egress"
	"github.com/cairn-dev/cairn/internal/provider"
)

func policy(t *testing.T, allow []string, multiTenant bool) *egress.Policy {
	t.Helper()
	p, err := egress.New(allow, multiTenant)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// newPolicyRig is a rig whose provider uses the default client under pol, as app builds it.
func newPolicyRig(t *testing.T, pol *egress.Policy) *rig {
	t.Helper()
	r := newRig(t)
	p := New(Config{Store: r.store, Key: []byte("test-key"), ResponseURL: r.srv.URL + "/", Policy: pol,
		Now: func() time.Time { return testNow }})
	p.poll, p.maxPoll, p.backoff = 20*time.Millisecond, 50*time.Millisecond, time.Millisecond
	t.Cleanup(func() { p.Close() })
	r.p = p // responses still land through the rig's first provider, in the shared store
	return r
}

// TestCheckServiceTokenPolicy: Check refuses what the URL alone shows the policy refuses.
func TestCheckServiceTokenPolicy(t *testing.T) {
	tenants := policy(t, nil, true)
	listed := policy(t, []string{"handlers.internal"}, false)
	cases := map[string]struct {
		reason string
		pol    *egress.Policy
		res    provider.Resource
		token  string
		want   string // "" passes
	}{
		"NoPolicy":         {reason: "A single-user server refuses nothing.", res: cfnResource, token: "http://169.254.169.254/latest/meta-data/"},
		"TenantsMetadata":  {reason: "Tenants: the metadata address.", pol: tenants, res: cfnResource, token: "http://169.254.169.254/latest/meta-data/", want: "link-local"},
		"TenantsLoopback":  {reason: "Tenants: loopback.", pol: tenants, res: cfnResource, token: "https://127.0.0.1:8443/hook", want: "loopback"},
		"TenantsROSWeb":    {reason: "ROS web[sync]: tokens too.", pol: tenants, res: rosResource, token: "web[sync]:http://[::1]:9000/", want: "loopback"},
		"TenantsMetaName":  {reason: "Tenants: a metadata host name.", pol: tenants, res: cfnResource, token: "http://metadata.google.internal/computeMetadata/v1/", want: "metadata"},
		"TenantsPublic":    {reason: "Tenants: a public name waits for the dial.", pol: tenants, res: cfnResource, token: "https://hooks.example.com/x"},
		"TenantsFunction":  {reason: "Function tokens are not URLs.", pol: tenants, res: cfnResource, token: "arn:aws:lambda:us-east-1:123456789012:function:f", want: "serves no functions"},
		"ListedName":       {reason: "A listed name.", pol: listed, res: cfnResource, token: "https://handlers.internal/x"},
		"ListedOther":      {reason: "An unlisted name.", pol: listed, res: rosResource, token: "web:https://hooks.example.com/x", want: "not in the allow list"},
		"NoURLInTheReason": {reason: "The reason names the host, never the path or query.", pol: listed, res: cfnResource, token: "https://x.example/p?key=hunter2", want: `host "x.example"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := New(Config{Store: newMemStore(), Key: []byte("k"), Policy: tc.pol})
			resp, err := p.Check(context.Background(), provider.CheckRequest{Resource: tc.res, Props: tokenProps(tc.token, nil)})
			if err != nil {
				t.Fatal(err)
			}
			var got string
			for _, f := range resp.Failures {
				got += f.Property + ": " + f.Reason + "\n"
			}
			switch {
			case tc.want == "" && got != "":
				t.Errorf("%s\nCheck failures:\n%s", tc.reason, got)
			case tc.want != "" && (!strings.Contains(got, tc.want) || !strings.HasPrefix(got, "ServiceToken: ")):
				t.Errorf("%s\nCheck failures:\n%s\nwant one on ServiceToken containing %q", tc.reason, got, tc.want)
			case strings.Contains(got, "hunter2"):
				t.Errorf("%s\nCheck failure quotes the URL: %s", tc.reason, got)
			}
		})
	}
}

// TestDeliveryPolicy sends real requests under a policy to a handler on 127.0.0.1: refused on
// a tenants server (before anything is sent, and nothing to roll back), allowed when listed,
// refused at dial time through a name that resolves there, and refused when an allowed
// handler redirects to a refused address.
func TestDeliveryPolicy(t *testing.T) {
	type want struct {
		summary    string // substring of the diagnostic; "" = success
		requests   int
		notCreated bool
	}
	cases := map[string]struct {
		reason   string
		allow    []string
		tenants  bool
		viaName  bool // the token names "localhost" instead of 127.0.0.1
		redirect string
		want     want
	}{
		"Tenants": {reason: "A tenants server refuses its own loopback.", tenants: true,
			want: want{summary: `refuses host "127.0.0.1": it is a loopback address`, notCreated: true}},
		"TenantsListed": {reason: "Listing 127.0.0.1 allows it.", allow: []string{"127.0.0.1"}, tenants: true,
			want: want{requests: 1}},
		"ResolvesOutside": {reason: "A name passes the URL check (the list has a CIDR) and is refused at dial time.",
			allow: []string{"10.0.0.0/8"}, viaName: true,
			want: want{summary: `refuses host "localhost": it resolves to an address outside the allow list`, notCreated: true}},
		"RedirectRefused": {reason: "An allowed handler redirecting to the metadata address is refused.",
			allow: []string{"127.0.0.1"}, redirect: "http://169.254.169.254/latest/meta-data/iam/",
			want: want{summary: `refuses host "169.254.169.254"`, requests: 1, notCreated: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := newPolicyRig(t, policy(t, tc.allow, tc.tenants))
			h := &fakeHandler{t: t, respond: succeed(nil)}
			if tc.redirect != "" {
				h.respond = nil
				h.answer = func(map[string]any) (int, string) { return http.StatusTemporaryRedirect, "" }
			}
			token := r.handle("/h", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				if tc.redirect != "" {
					w.Header().Set("Location", tc.redirect)
				}
				h.ServeHTTP(w, req)
			}))
			if tc.viaName {
				_, port, _ := net.SplitHostPort(strings.TrimPrefix(r.srv.URL, "http://"))
				token = "http://localhost:" + port + "/h"
			}
			o, err := r.p.run(context.Background(), call{kind: reqCreate, res: cfnResource, token: "tok", props: tokenProps(token, nil)})
			if err != nil {
				t.Fatalf("%s\nrun: %v", tc.reason, err)
			}
			got := want{requests: h.count(), notCreated: o.notCreated != ""}
			if msg := o.diags.Error(); len(o.diags) > 0 {
				got.summary = tc.want.summary
				if tc.want.summary == "" || !strings.Contains(msg, tc.want.summary) {
					t.Errorf("%s\ndiagnostic %q, want one containing %q", tc.reason, msg, tc.want.summary)
				}
				if !strings.Contains(msg, "The service-token policy refused the ServiceToken endpoint") {
					t.Errorf("%s\ndiagnostic %q does not say the policy refused it", tc.reason, msg)
				}
				if tc.viaName && strings.Contains(msg, "127.0.0.1") {
					t.Errorf("%s\ndiagnostic %q names the address the name resolved to", tc.reason, msg)
				}
			}
			if got != tc.want {
				t.Errorf("%s\noutcome = %+v, want %+v", tc.reason, got, tc.want)
			}
		})
	}
}

// TestFailingEndpointExcerpt: a 500 with a 1 MB body full of control characters is quoted as a
// short, clean excerpt, and the Create reports that nothing was created.
func TestFailingEndpointExcerpt(t *testing.T) {
	r := newRig(t)
	body := strings.Repeat("\x1b[2J\x00secret\r\n\u202e", 1<<20/16)
	token := r.handle("/h", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(body))
	}))
	resp, err := r.p.Create(context.Background(), provider.CreateRequest{Resource: cfnResource, Token: "tok",
		Props: tokenProps(token, map[string]cty.Value{"Name": cty.StringVal("x")})})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Diagnostics) != 1 {
		t.Fatalf("diagnostics = %v, want one", resp.Diagnostics)
	}
	detail := resp.Diagnostics[0].Detail
	quoted, ok := strings.CutPrefix(detail, "RequestId tok; response body: ")
	if !ok {
		t.Fatalf("detail %q does not quote the body", detail)
	}
	unq, err := strconv.Unquote(quoted)
	if err != nil {
		t.Fatalf("detail %q: the body is not quoted: %v", detail, err)
	}
	if len(unq) > egress.ExcerptBytes+len("…") || !strings.HasSuffix(unq, "…") {
		t.Errorf("excerpt is %d bytes %q, want at most %d ending in …", len(unq), unq, egress.ExcerptBytes+3)
	}
	for _, c := range unq {
		if unicode.IsControl(c) || c == '\u202e' {
			t.Fatalf("excerpt %q keeps control character %U", unq, c)
		}
	}
	if resp.NotCreated != "" {
		t.Errorf("NotCreated = %q after a 500, want empty: a gateway may answer 500 after the handler acted", resp.NotCreated)
	}
}

// TestNotCreated: which failed Creates tell the engine that nothing exists to delete.
func TestNotCreated(t *testing.T) {
	cases := map[string]struct {
		reason string
		token  func(r *rig) string
		want   string // a fragment of NotCreated; "" = unset
	}{
		"NothingListens": {reason: "No connection: the request never left.",
			token: func(*rig) string { return "http://127.0.0.1:1/h" }, want: "could not connect"},
		"NoSuchHost": {reason: "A name that does not resolve: the request never left.",
			token: func(*rig) string { return "http://no-such-host.invalid/h" }, want: "could not connect"},
		"InvalidToken": {reason: "An unusable token: nothing was sent.",
			token: func(*rig) string { return "arn:aws:sns:us-east-1:123456789012:topic" }, want: "never sent"},
		"AcceptedThenFailed": {reason: "A handler that accepted the POST and answered FAILED may have made something: CloudFormation deletes it.",
			token: func(r *rig) string {
				return r.handle("/h", &fakeHandler{t: r.t, respond: func(ev map[string]any) map[string]any {
					m := answerTo(ev, "FAILED")
					m["Reason"], m["PhysicalResourceId"] = "quota exceeded", "half-made"
					return m
				}})
			}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := newRig(t)
			resp, err := r.p.Create(context.Background(), provider.CreateRequest{Resource: cfnResource, Token: "tok",
				Props: tokenProps(tc.token(r), nil)})
			if err != nil {
				t.Fatal(err)
			}
			if !resp.Diagnostics.HasErrors() {
				t.Fatalf("%s\nCreate succeeded", tc.reason)
			}
			if (tc.want == "") != (resp.NotCreated == "") || !strings.Contains(resp.NotCreated, tc.want) {
				t.Errorf("%s\nNotCreated = %q, want %q", tc.reason, resp.NotCreated, tc.want)
			}
		})
	}
}
