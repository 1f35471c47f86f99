package pulumiyaml

// propertyDeps are, by top-level property of props, the resources and invokes its value uses,
// as Pulumi's SDK records them per input (RegisterResource's propertyDependencies): every
// property written has an entry, empty when its value uses nothing. The whole object's
// dependencies were collected already, with their diagnostics; these are not reported twice.
func (p *parser) propertyDeps(props expr) map[string][]string {
	obj, ok := props.(objectExpr)
	if !ok || len(obj.keys) == 0 {
		return nil
	}
	reported := len(p.ds)
	out := make(map[string][]string, len(obj.keys))
	for i, k := range obj.keys {
		deps := p.deps(obj.elems[i], where{})
		if deps == nil {
			deps = []string{}
		}
		out[k] = deps
	}
	p.ds = p.ds[:reported]
	return out
}
