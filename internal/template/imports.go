package template

import "github.com/cairn-dev/cairn/internal/diag"

// Import is one instance of an import block of the Terraform language (a block with for_each
// makes one per element): the object its provider knows by ID becomes the resource instance
// To when the stack does not hold To yet; once it does, the block does nothing.
type Import struct {
	To string // absolute resource instance address, e.g. `module.m.time_static.t["a"]`
	// ID evaluates to the import id, a non-empty string. It may reference resources, whose
	// values must then be known when the import is planned (terraform's rule).
	ID      Expr
	Range   diag.Range // the import block
	IDRange diag.Range // its id argument
}

// Import returns the import block instance whose target is the resource instance called
// name, or nil.
func (s *Stack) Import(name string) *Import {
	for _, im := range s.Imports {
		if im.To == name {
			return im
		}
	}
	return nil
}
