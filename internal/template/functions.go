package template

import (
	"fmt"
	"strings"
	"sync"

	"github.com/zclconf/go-cty/cty/function"

	"github.com/cairn-dev/cairn/internal/diag"
)

// ProviderFunctions are the provider-defined functions a Terraform-language configuration can
// call ("provider::time::rfc3339_parse"). The parser makes it with the local provider names
// whose functions the configuration calls; the engine fills it once the providers are
// resolved, before it evaluates anything with a scope. Safe for concurrent use.
type ProviderFunctions struct {
	Names []string       // local provider names, sorted
	Calls []FunctionCall // every call of a provider function, in source order

	mu  sync.RWMutex
	fns map[string]function.Function // by full name
}

// Set makes fns, by full name, the functions available.
func (p *ProviderFunctions) Set(fns map[string]function.Function) {
	p.mu.Lock()
	p.fns = fns
	p.mu.Unlock()
}

// Get returns the functions available by full name; nil before Set.
func (p *ProviderFunctions) Get() map[string]function.Function {
	if p == nil {
		return nil
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.fns
}

// FunctionCall is a call of a provider function in the configuration.
type FunctionCall struct {
	Name  string // "provider::time::rfc3339_parse"
	Range diag.Range
}

// Check refuses the calls of functions that are not available once Set, as terraform does
// before anything is evaluated.
func (p *ProviderFunctions) Check() diag.Diagnostics {
	if p == nil {
		return nil
	}
	fns := p.Get()
	var out diag.Diagnostics
	for _, c := range p.Calls {
		if _, ok := fns[c.Name]; ok {
			continue
		}
		i := strings.LastIndex(c.Name, "::")
		namespace, name := c.Name[:i+2], c.Name[i+2:]
		local := strings.TrimSuffix(strings.TrimPrefix(namespace, "provider::"), "::")
		detail := fmt.Sprintf(`There is no function named "%s". Ensure that provider name %q is declared in this module's required_providers block, and that this provider offers a function named %q.`, c.Name, local, name)
		for fn := range fns {
			if strings.HasPrefix(fn, namespace) {
				detail = fmt.Sprintf("The function %q is not available from the provider %q.", name, local)
				break
			}
		}
		out = append(out, diag.Diagnostic{Severity: diag.Error, Summary: "Unknown provider function", Detail: detail, Range: c.Range})
	}
	return out
}
