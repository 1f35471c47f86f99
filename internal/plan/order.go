package plan

import "slices"

// Cascade decides which resources downstream of root go before root's delete-first
// replacement, as terraform orders them: a resource that depends on a replaced one and is
// itself replaced delete-first (replaces says so, given the set replaced so far) is destroyed
// before what it depends on, so that nothing is deleted while something still uses it. Its own
// step then creates it anew.
//
// order lists every resource in dependency order and dependsOn gives a resource's direct
// dependencies; the result is in destroy order, dependents first.
func Cascade(order []string, dependsOn func(string) []string, root string, replaces func(name string, replaced map[string]bool) bool) []string {
	replaced := map[string]bool{root: true}
	var doomed []string
	for _, name := range order {
		if replaced[name] || !slices.ContainsFunc(dependsOn(name), func(d string) bool { return replaced[d] }) {
			continue
		}
		if replaces(name, replaced) {
			replaced[name] = true
			doomed = append(doomed, name)
		}
	}
	slices.Reverse(doomed)
	return doomed
}

// Order fills in each delete-first replacement's DestroyFirst from the whole plan: the
// downstream resources the plan replaces delete-first as well. order and dependsOn are as for
// Cascade.
func (p *Plan) Order(order []string, dependsOn func(string) []string) {
	at := make(map[string]int, len(p.Steps))
	for i, s := range p.Steps {
		at[s.Resource] = i
	}
	deleteFirst := func(name string, _ map[string]bool) bool {
		i, ok := at[name]
		return ok && p.Steps[i].Action == Replace && p.Steps[i].Order == DeleteFirst
	}
	for i := range p.Steps {
		if deleteFirst(p.Steps[i].Resource, nil) {
			p.Steps[i].DestroyFirst = Cascade(order, dependsOn, p.Steps[i].Resource, deleteFirst)
		}
	}
}
