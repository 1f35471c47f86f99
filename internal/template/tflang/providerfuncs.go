package tflang

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/cairn-dev/cairn/internal/template"
)

// Provider-defined functions: `provider::NAME::FUNC(...)` calls a function of the provider
// the module's required_providers names NAME. The parser only notes which providers'
// functions are called (template.Stack.Functions); the engine, which starts providers, fills
// in the functions, and evaluations with a scope see them. Evaluations made while parsing
// (count, for_each) have none: a provider function there is an unknown function.

// providerFuncs is the loader's name for the stack's provider functions.
type providerFuncs = template.ProviderFunctions

// providerFunctions is the stack's provider functions: the providers whose functions the
// configuration's modules call, and every call, found in the files the loader parsed (and
// checked) already, in the order of their names. Call it once every module is loaded.
func (ld *loader) providerFunctions() *template.ProviderFunctions {
	if ld.funcs != nil {
		return ld.funcs
	}
	ld.funcs = &template.ProviderFunctions{}
	sort.SliceStable(ld.parsed, func(i, j int) bool { return ld.parsed[i].name < ld.parsed[j].name })
	seen := map[string]bool{}
	for _, f := range ld.parsed {
		if !bytes.Contains(ld.files[f.name], []byte("provider::")) {
			continue // .tf.json calls are in strings: evaluated, never listed
		}
		hclsyntax.VisitAll(f.body, func(n hclsyntax.Node) hcl.Diagnostics {
			call, ok := n.(*hclsyntax.FunctionCallExpr)
			if !ok || !strings.HasPrefix(call.Name, "provider::") {
				return nil
			}
			ld.funcs.Calls = append(ld.funcs.Calls, template.FunctionCall{Name: call.Name, Range: rangeOf(call.NameRange)})
			if parts := strings.Split(call.Name, "::"); len(parts) == 3 && !seen[parts[1]] {
				seen[parts[1]] = true
				ld.funcs.Names = append(ld.funcs.Names, parts[1])
			}
			return nil
		})
	}
	sort.Strings(ld.funcs.Names)
	return ld.funcs
}

// parsedFile is a .tf file the loader parsed, for providerFunctions.
type parsedFile struct {
	name string
	body *hclsyntax.Body
}

// withProviderFunctions adds the provider functions, when there are any, to a function table.
func (e *evaluator) withProviderFunctions(fns map[string]function.Function) map[string]function.Function {
	if e.s.scope == nil || e.m.ld.funcs == nil {
		return fns
	}
	extra := e.m.ld.funcs.Get()
	if len(extra) == 0 {
		return fns
	}
	out := make(map[string]function.Function, len(fns)+len(extra))
	for k, f := range fns {
		out[k] = f
	}
	for k, f := range extra {
		out[k] = f
	}
	return out
}

// providerFuncDiag rewrites hcl's unknown-function diagnostic for a provider function as
// terraform does (lang.checkForUnknownFunctionDiags); nil when d is about another call.
func providerFuncDiag(d *hcl.Diagnostic) *hcl.Diagnostic {
	extra, ok := hcl.DiagnosticExtra[hclsyntax.FunctionCallUnknownDiagExtra](d)
	if !ok {
		return nil
	}
	name, namespace := extra.CalledFunctionName(), extra.CalledFunctionNamespace()
	parts := strings.Split(namespace, "::")
	if len(parts) < 2 {
		return nil
	}
	c := *d
	c.Summary = "Unknown provider function"
	switch {
	case parts[0] != "provider":
		c.Detail = fmt.Sprintf(`The function namespace %q is not valid. Provider function calls must use the "provider::" namespace prefix.`, parts[0])
		return &c
	case parts[1] == "":
		c.Detail = `The function call must include the provider name after the "provider::" prefix.`
		return &c
	}
	if d.EvalContext != nil {
		root := d.EvalContext
		for root.Parent() != nil {
			root = root.Parent()
		}
		for fn := range root.Functions {
			if strings.HasPrefix(fn, namespace) {
				c.Detail = fmt.Sprintf("The function %q is not available from the provider %q.", name, parts[1])
				return &c
			}
		}
	}
	c.Detail = fmt.Sprintf(`There is no function named "%s%s". Ensure that provider name %q is declared in this module's required_providers block, and that this provider offers a function named %q.`,
		namespace, name, parts[1], name)
	return &c
}
