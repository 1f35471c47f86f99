package engine

import (
	"context"

	"github.com/zclconf/go-cty/cty/function"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/template"
)

// loadFunctions gives a Terraform-language stack the functions of the providers whose
// functions it calls (template.ProviderFunctions), from one unconfigured instance of each,
// as terraform calls them. A provider the module does not require has none: the call is then
// an unknown provider function, reported where it is made.
func (ps *providerSet) loadFunctions(ctx context.Context, st *template.Stack) diag.Diagnostics {
	if st.Functions == nil || len(st.Functions.Names) == 0 {
		return nil
	}
	var diags diag.Diagnostics
	fns := map[string]function.Function{}
	for _, name := range st.Functions.Names {
		req := st.Requirement(name)
		if req == nil {
			continue
		}
		pkg, ok := ps.pkgs[req.Source]
		if !ok {
			continue
		}
		addr := "functions:" + req.Source
		ps.mu.Lock()
		in, ok := ps.inst[addr]
		if !ok {
			dir, err := ps.workDirLocked()
			if err != nil {
				ps.mu.Unlock()
				return diags.Append(diag.Errorf(req.Range, "", "cannot start provider %s: %s", name, err))
			}
			in = &instance{p: pkg.Open(name, dir)}
			ps.inst[addr] = in
		}
		ps.mu.Unlock()
		fp, ok := in.p.(provider.FunctionProvider)
		if !ok {
			continue
		}
		got, err := fp.Functions(ctx)
		if err != nil {
			diags = diags.Append(diag.Errorf(req.Range, "", "cannot read the functions of provider %s: %s", name, err))
			continue
		}
		for fn, f := range got {
			fns["provider::"+name+"::"+fn] = f
		}
	}
	st.Functions.Set(fns)
	return diags.Append(st.Functions.Check())
}
