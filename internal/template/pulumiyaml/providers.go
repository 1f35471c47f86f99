package pulumiyaml

import (
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

// sourcePrefix marks a requirement's Source as a Pulumi package: it cannot be a Terraform
// provider address (no host, namespace and type), so the plugin resolver can tell them apart.
const sourcePrefix = "pulumi:"

// Source is the requirement source of Pulumi package pkg.
func Source(pkg string) string { return sourcePrefix + pkg }

// PackageOf returns the package of a requirement source Source made.
func PackageOf(source string) (string, bool) {
	pkg, ok := strings.CutPrefix(source, sourcePrefix)
	return pkg, ok && pkg != ""
}

// Detect says whether files are a Pulumi project.
func Detect(files map[string]string) bool {
	_, ok := files[ProjectFile]
	return ok
}

// DefaultProviderAddr is the graph address of package pkg's default provider, the one that
// serves resources without a provider option; it is the default provider's URN name in
// Pulumi, and cannot collide with a resource name (those hold no ':').
func DefaultProviderAddr(pkg string) string { return "pulumi:providers:" + pkg + "::default" }

// defaultProviders gives every resource without an explicit provider its package's default
// provider, configured with nothing but the version (pulumirpc adds it).
func defaultProviders(st *template.Stack) {
	seen := map[string]bool{}
	for _, r := range st.Resources {
		if r.Provider != "" || isProviderType(r.Type) { // an explicit provider is served by its package's plugin itself
			continue
		}
		pkg := Package(r.Type)
		r.Provider = DefaultProviderAddr(pkg)
		if !seen[pkg] {
			seen[pkg] = true
			st.Providers = append(st.Providers, &template.ProviderConfig{Addr: r.Provider, Name: pkg, Config: emptyConfig{}, Range: r.TypeRange})
		}
	}
}

// emptyConfig is a default provider's configuration: none.
type emptyConfig struct{}

func (emptyConfig) Eval(template.Scope) (cty.Value, diag.Diagnostics) { return cty.EmptyObjectVal, nil }
