package template

import "github.com/cairn-dev/cairn/internal/diag"

// Move is a moved block of the Terraform language, with absolute addresses: a resource
// ("module.a[0].t.n"), a resource instance ("t.n[2]") or a module call or instance
// ("module.a", "module.a[0]"). The stored objects at From take the address To before planning.
type Move struct {
	From, To string
	Range    diag.Range
}

// Removal is a removed block: the stored objects of a resource or module call From, which the
// configuration no longer declares, leave the state; Destroy says whether they are destroyed
// (as any resource removed from the configuration) or only forgotten.
type Removal struct {
	From    string
	Destroy bool
	Range   diag.Range
}
