package egress

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/tenant"
)

func TestNew(t *testing.T) {
	cases := map[string]struct {
		reason      string
		allow       []string
		multiTenant bool
		want        *Policy
		wantErr     string
	}{
		"NothingSingleUser": {reason: "No list on a server without a tenants file allows everything to the default tenant and guards internal addresses from the others (tenants of made tokens).",
			want: &Policy{hosts: map[string]bool{}, guardOthers: true}},
		"NothingMultiTenant": {reason: "No list on a multi-tenant server guards internal addresses.",
			multiTenant: true, want: &Policy{hosts: map[string]bool{}, guarded: true}},
		"EmptyEntries": {reason: "Empty entries (a trailing comma, an empty env value) list nothing.",
			allow: []string{"", " , "}, want: &Policy{hosts: map[string]bool{}, guardOthers: true}},
		"CommaSeparatedAndRepeated": {reason: "Entries are comma-separated, the flag repeatable; CIDRs are masked, IPs become /32 or /128, names lower case.",
			allow: []string{"10.1.2.3/8, Handlers.Internal.", "127.0.0.1", "[::1]", "::ffff:192.0.2.1"},
			want: &Policy{listed: true, hosts: map[string]bool{"handlers.internal": true}, prefixes: mustPrefixes(
				"10.0.0.0/8", "127.0.0.1/32", "::1/128", "192.0.2.1/32")}},
		"ListOnMultiTenant": {reason: "A list is the whole policy, tenants or not.",
			allow: []string{"handlers.internal"}, multiTenant: true,
			want: &Policy{listed: true, hosts: map[string]bool{"handlers.internal": true}}},
		"BadCIDR":   {reason: "A CIDR must parse.", allow: []string{"10.0.0.0/33"}, wantErr: `"10.0.0.0/33" is not a valid CIDR`},
		"URL":       {reason: "A URL is not a host.", allow: []string{"https://handlers.internal"}, wantErr: "not a host name"},
		"HostPort":  {reason: "A port is not part of an entry.", allow: []string{"handlers.internal:8080"}, wantErr: "not a host name"},
		"EmptyPart": {reason: "A name has no empty label.", allow: []string{"a..b"}, wantErr: "not a host name"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := New(tc.allow, tc.multiTenant)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s\nNew(%q) error = %v, want one containing %q", tc.reason, tc.allow, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nNew(%q): %v", tc.reason, tc.allow, err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(Policy{}), cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
				t.Errorf("%s\nNew(%q): -want +got:\n%s", tc.reason, tc.allow, diff)
			}
		})
	}
}

func mustPrefixes(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

func TestCheckURL(t *testing.T) {
	guarded := mustNew(t, nil, true)
	single := mustNew(t, nil, false)
	listed := mustNew(t, []string{"handlers.internal", "127.0.0.1"}, false)
	listedCIDR := mustNew(t, []string{"10.0.0.0/8"}, true)
	listedNames := mustNew(t, []string{"handlers.internal"}, true)
	cases := map[string]struct {
		reason string
		p      *Policy
		tenant string // the request's tenant; "" default
		url    string
		want   string // "" allowed; else a fragment of the refusal
	}{
		"NilAllowsAll":         {reason: "No policy: everything.", p: nil, url: "http://169.254.169.254/latest"},
		"SingleDefault":        {reason: "No tenants file: the default tenant reaches everything.", p: single, url: "http://127.0.0.1:8080/"},
		"SingleOtherLoopback":  {reason: "No tenants file: another tenant (a made token's) is guarded.", p: single, tenant: "alpha", url: "http://127.0.0.1:8080/", want: "loopback"},
		"SingleOtherMetadata":  {reason: "No tenants file: another tenant is guarded from metadata names.", p: single, tenant: "alpha", url: "http://metadata.google.internal/", want: "metadata"},
		"SingleOtherPublic":    {reason: "No tenants file: another tenant reaches public addresses.", p: single, tenant: "alpha", url: "https://203.0.113.7/"},
		"GuardedPublic":        {reason: "Guarded: public addresses pass.", p: guarded, url: "https://203.0.113.7/"},
		"GuardedName":          {reason: "Guarded: a name passes until it is resolved.", p: guarded, url: "https://handlers.example.com/x"},
		"GuardedLoopback":      {reason: "Guarded: loopback literal.", p: guarded, url: "http://127.0.0.2:8080/", want: "loopback"},
		"GuardedLoopbackV6":    {reason: "Guarded: ::1.", p: guarded, url: "http://[::1]:8080/", want: "loopback"},
		"GuardedMapped":        {reason: "Guarded: IPv4-mapped loopback.", p: guarded, url: "http://[::ffff:127.0.0.1]/", want: "loopback"},
		"GuardedMetadata":      {reason: "Guarded: the metadata address is link-local.", p: guarded, url: "http://169.254.169.254/latest/meta-data/", want: "link-local"},
		"GuardedLinkLocalV6":   {reason: "Guarded: fe80::/10.", p: guarded, url: "http://[fe80::1%25eth0]/", want: "link-local"},
		"GuardedUnspecified":   {reason: "Guarded: 0.0.0.0 reaches this host.", p: guarded, url: "http://0.0.0.0:80/", want: "unspecified"},
		"GuardedUnspecifiedV6": {reason: "Guarded: ::.", p: guarded, url: "http://[::]:80/", want: "unspecified"},
		"GuardedAlibaba":       {reason: "Guarded: Alibaba Cloud's metadata address.", p: guarded, url: "http://100.100.100.200/latest", want: "metadata"},
		"GuardedMetadataName":  {reason: "Guarded: metadata host names.", p: guarded, url: "http://Metadata.Google.Internal./computeMetadata/v1/", want: "metadata"},
		"GuardedLocalhost":     {reason: "Guarded: localhost is loopback by definition.", p: guarded, url: "http://localhost:9000/", want: "loopback"},
		"ListedName":           {reason: "Listed: a listed name.", p: listed, url: "https://HANDLERS.internal:8443/x"},
		"ListedIP":             {reason: "Listed: a listed address, even loopback.", p: listed, url: "http://127.0.0.1:9/"},
		"ListedOtherIP":        {reason: "Listed: any other literal.", p: listed, url: "http://127.0.0.2:9/", want: "not in the allow list"},
		"ListedOtherName":      {reason: "Listed without CIDRs: an unlisted name can match nothing.", p: listedNames, url: "https://evil.example/", want: "not in the allow list"},
		"ListedSubdomain":      {reason: "Listed: names match exactly.", p: listedNames, url: "https://a.handlers.internal/", want: "not in the allow list"},
		"ListedIPName":         {reason: "A list with an address: a name may resolve to it, so it waits for the dial.", p: listed, url: "https://evil.example/"},
		"CIDRName":             {reason: "A CIDR list: a name may resolve into it, so it waits for the dial.", p: listedCIDR, url: "https://handlers.example.com/"},
		"CIDRIn":               {reason: "A CIDR list: a literal inside.", p: listedCIDR, url: "https://10.2.3.4/"},
		"CIDROut":              {reason: "A CIDR list: a literal outside, even on a tenants server.", p: listedCIDR, url: "https://127.0.0.1/", want: "not in the allow list"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			if tc.tenant != "" {
				ctx = tenant.With(ctx, tc.tenant)
			}
			err := tc.p.CheckURL(ctx, tc.url)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%s\nCheckURL(%s) = %v, want nil", tc.reason, tc.url, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !IsRefused(err)):
				t.Errorf("%s\nCheckURL(%s) = %v, want a refusal containing %q", tc.reason, tc.url, err, tc.want)
			}
		})
	}
}

func mustNew(t *testing.T, allow []string, multiTenant bool) *Policy {
	t.Helper()
	p, err := New(allow, multiTenant)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeDNS serves A queries for every name with 127.0.0.1 (and no AAAA records) over UDP: a
// public-looking name that resolves to loopback, as a DNS-rebinding attacker's would.
func fakeDNS(t *testing.T) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			q := buf[:n]
			if n < 12 {
				continue
			}
			end := 12 // question: name labels, then type and class
			for end < n && q[end] != 0 {
				end += int(q[end]) + 1
			}
			end += 5
			if end > n {
				continue
			}
			qtype := binary.BigEndian.Uint16(q[end-4:])
			resp := append([]byte(nil), q[:end]...)
			resp[2], resp[3] = 0x81, 0x80            // response, recursion available, no error
			binary.BigEndian.PutUint16(resp[6:], 0)  // answers
			binary.BigEndian.PutUint16(resp[8:], 0)  // authority
			binary.BigEndian.PutUint16(resp[10:], 0) // additional
			if qtype == 1 {                          // A
				binary.BigEndian.PutUint16(resp[6:], 1)
				resp = append(resp, 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1)
			}
			_, _ = pc.WriteTo(resp, from)
		}
	}()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
}

// TestDialRefusesResolvedAddress runs real requests through Client: to a handler on 127.0.0.1
// by address and by a name that resolves there (through a fake DNS server), under a tenants
// server's policy, an allow list naming it, and one that does not.
func TestDialRefusesResolvedAddress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	byIP := srv.URL + "/"
	byName := "http://handlers.rebind.test:" + itoa(port) + "/"
	resolver := fakeDNS(t)

	cases := map[string]struct {
		reason string
		allow  []string
		tenant bool
		url    string
		want   string // "" for an answer; else a fragment of the refusal
	}{
		"NoPolicy":         {reason: "A single-user server without a list reaches its own handler.", url: byIP},
		"TenantsLiteral":   {reason: "Tenants: a loopback literal is refused (by CheckHost before dialling).", tenant: true, url: byIP, want: "it is a loopback address"},
		"TenantsRebound":   {reason: "Tenants: a name resolving to loopback is refused at dial time.", tenant: true, url: byName, want: "it resolves to a loopback address"},
		"ListedAddress":    {reason: "Listed 127.0.0.1: allowed.", allow: []string{"127.0.0.1"}, tenant: true, url: byIP},
		"ListedCIDRByName": {reason: "Listed 127.0.0.0/8: a name resolving into it is allowed.", allow: []string{"127.0.0.0/8"}, tenant: true, url: byName},
		"ListedName":       {reason: "Listed name: allowed whatever it resolves to.", allow: []string{"handlers.rebind.test"}, url: byName},
		"OtherCIDRByName":  {reason: "A CIDR list: a name resolving outside it is refused at dial time.", allow: []string{"10.0.0.0/8"}, url: byName, want: "it resolves to an address outside the allow list"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := mustNew(t, tc.allow, tc.tenant)
			c := p.Client(&http.Transport{}, &net.Dialer{Timeout: 5 * time.Second, Resolver: resolver})
			defer c.CloseIdleConnections()
			resp, err := c.Get(tc.url)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("%s\nGET %s: %v", tc.reason, tc.url, err)
				}
				resp.Body.Close()
				return
			}
			if err == nil {
				resp.Body.Close()
				t.Fatalf("%s\nGET %s answered %s, want a refusal", tc.reason, tc.url, resp.Status)
			}
			var re *RefusedError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s\nGET %s: %v, want a *RefusedError containing %q", tc.reason, tc.url, err, tc.want)
			}
			if strings.Contains(re.Error(), "127.0.0.1") && strings.Contains(tc.url, "rebind") {
				t.Errorf("%s\nthe refusal names the resolved address: %v", tc.reason, re)
			}
			var oe *net.OpError
			if !errors.As(err, &oe) || oe.Op != "dial" {
				t.Errorf("%s\nGET %s: %v, want a dial error (nothing was sent)", tc.reason, tc.url, err)
			}
		})
	}
}

// TestRedirectRefused: an allowed endpoint redirecting to a refused one is refused: by
// CheckRedirect for an address literal, by the dialer for a name that passes the name check
// (the list has a CIDR it could resolve into) but resolves to loopback.
func TestRedirectRefused(t *testing.T) {
	var hits atomic.Int32
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "secret")
	}))
	defer internal.Close()
	port := internal.Listener.Addr().(*net.TCPAddr).Port
	resolver := fakeDNS(t)
	for name, target := range map[string]string{
		"Literal": internal.URL + "/latest/meta-data/",
		"Name":    "http://metadata.rebind.test:" + itoa(port) + "/latest/meta-data/",
	} {
		t.Run(name, func(t *testing.T) {
			// The "public" endpoint is reached through a listed name that the transport maps to
			// the redirecting server, whose own address is not listed.
			redirector := httptest.NewServer(http.RedirectHandler(target, http.StatusTemporaryRedirect))
			defer redirector.Close()
			p := mustNew(t, []string{"public.example", "10.0.0.0/8"}, true)
			d := &net.Dialer{Timeout: 5 * time.Second, Resolver: resolver}
			c := p.Client(&http.Transport{}, d)
			tr := c.Transport.(*http.Transport)
			dial := tr.DialContext
			tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				if strings.HasPrefix(addr, "public.example:") { // test plumbing: "DNS" for the listed name
					var plain net.Dialer
					return plain.DialContext(ctx, network, redirector.Listener.Addr().String())
				}
				return dial(ctx, network, addr)
			}
			defer c.CloseIdleConnections()
			u, _ := url.Parse(redirector.URL)
			resp, err := c.Post("http://public.example:"+u.Port()+"/", "application/json", strings.NewReader("{}"))
			if err == nil {
				resp.Body.Close()
				t.Fatalf("POST answered %s after a redirect to %s, want a refusal", resp.Status, target)
			}
			if !IsRefused(err) {
				t.Fatalf("POST: %v, want a refusal", err)
			}
			var oe *net.OpError
			if dialled := errors.As(err, &oe); dialled != (name == "Name") {
				t.Errorf("POST: %v: refused by the dialer = %v, want %v", err, dialled, name == "Name")
			}
			if n := hits.Load(); n != 0 {
				t.Errorf("the internal server was reached %d times", n)
			}
		})
	}
}

func TestNilPolicyUsesProxy(t *testing.T) {
	var p *Policy
	if p.Proxy() == nil {
		t.Error("a nil policy drops the environment's proxy")
	}
	if mustNew(t, nil, true).Proxy() != nil {
		t.Error("a policy in force keeps the environment's proxy, which would dial for it")
	}
}

func TestExcerpt(t *testing.T) {
	big := make([]byte, 1<<20)
	for i := range big {
		big[i] = "a\x00\x1b\n\t\xff\u202e"[i%7] // NUL, ESC, newline, tab, an invalid byte, the start of RLO
	}
	cases := map[string]struct {
		reason string
		in     []byte
		want   string
	}{
		"Empty":   {reason: "Nothing to quote.", in: nil, want: ""},
		"Short":   {reason: "A short answer is kept.", in: []byte(`{"message":"Internal Server Error"}`), want: `{"message":"Internal Server Error"}`},
		"Lines":   {reason: "Line breaks become spaces, surrounding space goes.", in: []byte("\n  bad\r\ngateway\t\n"), want: "bad  gateway"},
		"Control": {reason: "Terminal escapes, NUL and bidi overrides are replaced.", in: []byte("a\x1b[31mred\x00\u202eevil"), want: "a\uFFFD[31mred\uFFFD\uFFFDevil"},
		"Invalid": {reason: "Invalid UTF-8 is replaced.", in: []byte("ok\xff\xfe"), want: "ok\uFFFD\uFFFD"},
		"Exact":   {reason: "Exactly the limit: no ellipsis.", in: []byte(strings.Repeat("x", ExcerptBytes)), want: strings.Repeat("x", ExcerptBytes)},
		"Cut":     {reason: "Over the limit: cut, with an ellipsis.", in: []byte(strings.Repeat("x", ExcerptBytes+1)), want: strings.Repeat("x", ExcerptBytes) + "…"},
		"CutRune": {reason: "A cut never splits a character.", in: []byte(strings.Repeat("é", ExcerptBytes)), want: strings.Repeat("é", ExcerptBytes/2) + "…"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Excerpt(tc.in)); diff != "" {
				t.Errorf("%s\nExcerpt: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
	t.Run("OneMegabyte", func(t *testing.T) {
		got := Excerpt(big)
		if len(got) > ExcerptBytes+len("…") || !strings.HasSuffix(got, "…") || !utf8.ValidString(got) {
			t.Fatalf("Excerpt(1 MB) = %d bytes %q, want at most %d valid bytes ending in …", len(got), got, ExcerptBytes+3)
		}
		for _, r := range strings.TrimSuffix(got, "…") {
			if r < 0x20 || r == 0x7f || r == '\u202e' {
				t.Fatalf("Excerpt(1 MB) = %q keeps control character %U", got, r)
			}
		}
	})
}

func itoa(i int) string { return strconv.Itoa(i) }
