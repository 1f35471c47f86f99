package pulumiyaml

import (
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

// A plugin download URL (a package declaration's `downloadUrl`, the `pluginDownloadURL`
// option) tells Pulumi where to fetch a plugin. cairn never downloads one, but keeps the URL
// where Pulumi keeps it, so that the state reads the same: in the provider's inputs under
// `__internal.pluginDownloadURL`, and in the default provider's name
// (`default_9_0_0_http_/example.com`). Resources of one package that ask for different URLs
// get different default providers, as in Pulumi; all are served by the one plugin found.

// pluginDownloadKey is the key of the URL under a provider's __internal inputs.
const pluginDownloadKey = "pluginDownloadURL"

// defaultProviderAddr is the address of package pkg's default provider for download URL url:
// DefaultProviderAddr without one, `pulumi:providers:<pkg>::default@<url>` with one.
func defaultProviderAddr(pkg, url string) string {
	if url == "" {
		return DefaultProviderAddr(pkg)
	}
	return DefaultProviderAddr(pkg) + "@" + url
}

// DefaultProviderOf says whether addr is a default provider's address, and of which package
// and download URL ("" for none).
func DefaultProviderOf(addr string) (pkg, url string, ok bool) {
	rest, ok := strings.CutPrefix(addr, "pulumi:providers:")
	if !ok {
		return "", "", false
	}
	pkg, name, ok := strings.Cut(rest, "::")
	if !ok || pkg == "" {
		return "", "", false
	}
	if name == "default" {
		return pkg, "", true
	}
	url, ok = strings.CutPrefix(name, "default@")
	return pkg, url, ok
}

// declaredURL is the download URL the package declaration of namespace pkg gives, "" for none.
func (p *parser) declaredURL(pkg string) string {
	for _, d := range p.packages {
		if d.namespace() == pkg && d.DownloadURL != "" {
			return d.DownloadURL
		}
	}
	return ""
}

// resourceDownloadURL is the URL of the default provider serving r: its option, else the
// package declaration's (Pulumi's defaultProviderInfo fills a request without one).
func (p *parser) resourceDownloadURL(r *template.Resource, pkg string) string {
	if url, ok := p.downloadURL[r.Name]; ok && url != "" {
		return url
	}
	return p.declaredURL(pkg)
}

// withDownloadURL is the properties of provider resource r with the URL Pulumi stores under
// __internal: its option; else, when it pins no version either, the package declaration's
// (an explicit provider that names no plugin gets the default provider's); else none.
func (p *parser) withDownloadURL(r *template.Resource, pkg string) template.Expr {
	url, ok := p.downloadURL[r.Name]
	if !ok && !p.pinsVersion(r) {
		url = p.declaredURL(pkg)
	}
	if url == "" {
		return r.Properties
	}
	return internalExpr{x: r.Properties, internal: map[string]cty.Value{pluginDownloadKey: cty.StringVal(url)}}
}

// pinsVersion says whether r has a version option.
func (p *parser) pinsVersion(r *template.Resource) bool {
	for _, v := range p.versions {
		if v.r == r {
			return true
		}
	}
	return false
}

// internalExpr adds engine settings under __internal to a provider resource's properties;
// the plugin adapter takes them out before the plugin sees the configuration.
type internalExpr struct {
	x        template.Expr
	internal map[string]cty.Value
}

func (e internalExpr) Eval(s template.Scope) (cty.Value, diag.Diagnostics) {
	v, ds := e.x.Eval(s)
	if v == cty.NilVal || v.IsNull() || !v.IsKnown() || !v.Type().IsObjectType() {
		return v, ds
	}
	v, marks := v.Unmark()
	attrs := v.AsValueMap()
	if attrs == nil {
		attrs = map[string]cty.Value{}
	}
	attrs["__internal"] = cty.ObjectVal(e.internal)
	return cty.ObjectVal(attrs).WithMarks(marks), ds
}
