// Package egress is cairn's policy for the requests it makes on a user's behalf to an address
// the user chose (custom-resource ServiceTokens, url functions and the private providers served
// by them): which hosts they may reach, checked on the address actually dialled, and how much of
// a failing answer may be quoted back to the user. It imports only the standard library.
//
// A nil *Policy allows everything. A Policy made with an allow list allows only the hosts and
// CIDRs it lists; one made for a multi-tenant server without a list refuses loopback,
// link-local, unspecified and cloud-metadata addresses and the metadata host names; one made
// for a server without a tenants file refuses them to every request but the server admin's
// (tokens made with `cairn token create`), read from the request's context. The check
// runs in the dialer on every IP address a connection is attempted to, so a name that
// resolves (or re-resolves) to a refused address and a redirect to one are refused as well.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"

	"github.com/cairn-dev/cairn/internal/tenant"
)

// Policy says which hosts outbound requests may reach; see the package documentation.
type Policy struct {
	listed   bool            // an allow list was given: only what it names is allowed
	hosts    map[string]bool // listed host names, lower case, without a trailing dot
	prefixes []netip.Prefix  // listed CIDRs and addresses
	guarded  bool            // no list on a multi-tenant server: internal addresses are refused
	// guardOthers: no list, no tenants file: internal addresses are refused to every request
	// but the server admin's (tokens made with `cairn token create` are guarded).
	guardOthers bool
}

// guards reports whether internal addresses are refused to a request made with ctx.
func (p *Policy) guards(ctx context.Context) bool {
	return p.guarded || (p.guardOthers && !trusted(ctx))
}

// trusted reports whether ctx is the server admin's request, or an operation one started (or
// one of a server that lets every token run code, --allow-tenant-code: it may reach anything).
func trusted(ctx context.Context) bool {
	if ok, known := tenant.RunCodeFrom(ctx); known {
		return ok
	}
	return tenant.CallerFrom(ctx).ServerAdmin()
}

// New returns the policy for an allow list (entries may each hold several, comma-separated)
// on a server that is multi-tenant (a tenants file) or not. No entries and not multiTenant:
// everything is allowed to the default tenant, internal addresses refused to the others. The error names the entry that is not a host name, an IP address or a CIDR.
func New(allow []string, multiTenant bool) (*Policy, error) {
	p := &Policy{hosts: map[string]bool{}}
	for _, list := range allow {
		for e := range strings.SplitSeq(list, ",") {
			e = strings.TrimSpace(e)
			if e == "" {
				continue
			}
			if err := p.add(e); err != nil {
				return nil, err
			}
			p.listed = true
		}
	}
	if !p.listed {
		p.guarded, p.guardOthers = multiTenant, !multiTenant
	}
	return p, nil
}

func (p *Policy) add(e string) error {
	if strings.Contains(e, "/") && !strings.Contains(e, "://") {
		pre, err := netip.ParsePrefix(e)
		if err != nil {
			return fmt.Errorf("allow-list entry %q is not a valid CIDR (such as 10.0.0.0/8 or fd00::/8)", e)
		}
		if pre.Addr().Is4In6() {
			return fmt.Errorf("allow-list entry %q: write an IPv4 CIDR in IPv4 form", e)
		}
		p.prefixes = append(p.prefixes, pre.Masked())
		return nil
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(e, "["), "]")); err == nil {
		a = canonical(a)
		p.prefixes = append(p.prefixes, netip.PrefixFrom(a, a.BitLen()))
		return nil
	}
	h := normalHost(e)
	if !validHostName(h) {
		return fmt.Errorf("allow-list entry %q is not a host name, an IP address or a CIDR (give no scheme, port or path)", e)
	}
	p.hosts[h] = true
	return nil
}

// validHostName reports whether h (normalised) is a DNS name: labels of letters, digits, '-'
// and '_' separated by dots.
func validHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// RefusedError is a request the policy refuses. Its message names the host as the URL gave
// it and the kind of address refused, never the address a name resolved to.
type RefusedError struct {
	Host   string // the URL's host, without port
	Reason string // such as "it resolves to a loopback address"
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("the service-token policy of this cairn server refuses host %q: %s", e.Host, e.Reason)
}

// IsRefused reports whether err is or wraps a *RefusedError.
func IsRefused(err error) bool {
	var re *RefusedError
	return errors.As(err, &re)
}

// CheckURL checks what can be known of raw before connecting: its host when it is an IP
// address, a metadata host name, or a name the allow list does not name (when the list has no
// CIDR the name could resolve into). A nil error does not promise the connection is allowed:
// that is decided when dialling. An unparsable URL is not this check's business (nil).
// ctx says for which tenant the request is made (tenant.From).
func (p *Policy) CheckURL(ctx context.Context, raw string) error {
	if p == nil {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil
	}
	return p.checkHost(host{u.Hostname(), p.guards(ctx)})
}

// host is a host to check, and whether internal addresses are refused to it.
type host struct {
	name    string
	guarded bool
}

func (p *Policy) checkHost(hh host) error {
	if p == nil {
		return nil
	}
	host := hh.name
	if a, err := netip.ParseAddr(host); err == nil {
		return p.checkAddr(hh, a, "it is")
	}
	h := normalHost(host)
	switch {
	case p.listed && p.hosts[h]:
		return nil
	case p.listed && len(p.prefixes) == 0:
		return &RefusedError{Host: host, Reason: "it is not in the allow list (--service-token-allow)"}
	case hh.guarded && metadataHosts[h]:
		return &RefusedError{Host: host, Reason: "it is a cloud metadata service" + unlessListed}
	case hh.guarded && (h == "localhost" || strings.HasSuffix(h, ".localhost")):
		return &RefusedError{Host: host, Reason: "it is a loopback name" + unlessListed}
	}
	return nil
}

// checkAddr checks one address host resolved to (or is: verb says which).
func (p *Policy) checkAddr(hh host, a netip.Addr, verb string) error {
	if p == nil {
		return nil
	}
	host := hh.name
	a = canonical(a)
	if p.listed {
		if p.hosts[normalHost(host)] {
			return nil
		}
		for _, pre := range p.prefixes {
			if pre.Contains(a) {
				return nil
			}
		}
		if verb == "it is" {
			return &RefusedError{Host: host, Reason: "it is not in the allow list (--service-token-allow)"}
		}
		return &RefusedError{Host: host, Reason: "it resolves to an address outside the allow list (--service-token-allow)"}
	}
	if kind := internal(a); hh.guarded && kind != "" {
		return &RefusedError{Host: host, Reason: verb + " " + kind + unlessListed}
	}
	return nil
}

// unlessListed ends the reason of a refusal on a multi-tenant server without an allow list.
const unlessListed = ", refused on a server with tenants unless --service-token-allow lists it"

// metadataHosts are the names of cloud metadata services (refused on a multi-tenant server
// without an allow list; they resolve to link-local addresses, refused as well).
var metadataHosts = map[string]bool{
	"metadata":                   true,
	"metadata.google.internal":   true,
	"metadata.goog":              true,
	"instance-data":              true,
	"instance-data.ec2.internal": true,
}

// metadataAddrs are cloud metadata addresses outside the link-local ranges.
var metadataAddrs = []netip.Prefix{
	netip.MustParsePrefix("100.100.100.200/32"), // Alibaba Cloud ECS
	netip.MustParsePrefix("fd00:ec2::254/128"),  // AWS EC2 over IPv6
}

var thisNetwork = netip.MustParsePrefix("0.0.0.0/8") // "this host on this network": reaches the local host

// internal names the kind of a for refusal messages, "" when it is an ordinary address.
func internal(a netip.Addr) string {
	switch {
	case a.IsLoopback():
		return "a loopback address"
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		return "a link-local address (where cloud metadata services answer)"
	case a.IsUnspecified() || thisNetwork.Contains(a):
		return "an unspecified address (it reaches this host)"
	}
	for _, pre := range metadataAddrs {
		if pre.Contains(a) {
			return "a cloud metadata address"
		}
	}
	return ""
}

// canonical is a without zone, an IPv4-mapped IPv6 address as IPv4.
func canonical(a netip.Addr) netip.Addr { return a.Unmap().WithZone("") }

func normalHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

// DialContext returns a dial function for an http.Transport that dials with d and refuses,
// before connecting, every address p refuses (each address d tries, after resolution).
func (p *Policy) DialContext(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if p == nil {
		return d.DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		name, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		hh := host{name, p.guards(ctx)}
		if err := p.checkHost(hh); err != nil {
			return nil, &net.OpError{Op: "dial", Net: network, Err: err}
		}
		dd := *d
		inner, innerCtx := d.Control, d.ControlContext
		dd.Control = nil
		dd.ControlContext = func(ctx context.Context, network, address string, c syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return &RefusedError{Host: name, Reason: "it resolves to an address cairn cannot check"}
			}
			if err := p.checkAddr(hh, ap.Addr(), "it resolves to"); err != nil {
				return err
			}
			switch {
			case innerCtx != nil:
				return innerCtx(ctx, network, address, c)
			case inner != nil:
				return inner(network, address, c)
			}
			return nil
		}
		return dd.DialContext(ctx, network, addr)
	}
}

// Proxy is the Proxy of a Transport under p: the environment's proxy (HTTP_PROXY, ...) for a
// request p allows everything, none otherwise (the policy must see the address it connects to).
func (p *Policy) Proxy() func(*http.Request) (*url.URL, error) {
	if p == nil {
		return http.ProxyFromEnvironment
	}
	if p.listed || p.guarded {
		return nil
	}
	return func(req *http.Request) (*url.URL, error) {
		if p.guards(req.Context()) {
			return nil, nil
		}
		return http.ProxyFromEnvironment(req)
	}
}

// CheckRedirect is an http.Client's CheckRedirect under p: at most 10 redirects, none to a
// host p refuses by name or address literal (the dialer refuses the rest).
func (p *Policy) CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return p.checkHost(host{req.URL.Hostname(), p.guards(req.Context())})
}

// Client returns an http.Client whose transport is t (cloned) dialling with d under p, and
// whose redirects p checks.
func (p *Policy) Client(t *http.Transport, d *net.Dialer) *http.Client {
	t = t.Clone()
	t.DialContext = p.DialContext(d)
	t.Proxy = p.Proxy()
	return &http.Client{Transport: t, CheckRedirect: p.CheckRedirect}
}
