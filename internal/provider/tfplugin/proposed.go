package tfplugin

import (
	"github.com/zclconf/go-cty/cty"
)

// proposedNew is the ProposedNewState of a PlanResourceChange: what the configuration asks
// for, with what the provider computed before kept where the configuration is silent. It is
// cairn's own implementation of the rule terraform core applies (providers are written
// against it, so it must match):
//
//   - a computed attribute (computed-only or optional+computed) that the configuration leaves
//     null takes its prior value; every other attribute takes the configuration's value, null
//     and unknown included;
//   - an optional+computed nested attribute left null keeps its prior value only if that value
//     could have been computed, i.e. holds no non-computed attribute that is set (otherwise
//     the configuration used to set it and now removes it);
//   - nested blocks and nested attribute objects are merged element by element: lists by
//     index, maps by key, sets by finding the prior element the configured one could have
//     come from (equal in every attribute except computed ones the configuration leaves
//     null); an element without a prior counterpart is taken from the configuration as is;
//   - no prior object (a create) is treated as an object whose attributes are all null.
//
// Both values must be unmarked and of the block's implied type; config may hold unknowns.
// A null config (a delete) is not proposed: the caller sends null.
func (b *block) proposedNew(prior, config cty.Value) cty.Value {
	if config.IsNull() && prior.IsNull() {
		return prior
	}
	if prior.IsNull() {
		prior = b.emptyValue()
	}
	if config.IsNull() || !config.IsKnown() {
		return prior
	}
	out := proposedAttrs(b.attrs, prior, config)
	for name, nb := range b.blocks {
		out[name] = nb.proposedNew(prior.GetAttr(name), config.GetAttr(name))
	}
	return cty.ObjectVal(out)
}

func (nb *nestedBlock) proposedNew(prior, config cty.Value) cty.Value {
	if !config.IsKnown() {
		return config // a dynamic block over an unknown collection
	}
	switch nb.nesting {
	case nestSingle:
		if config.IsNull() {
			return config
		}
		return nb.block.proposedNew(prior, config)
	case nestGroup:
		return nb.block.proposedNew(prior, config)
	case nestList:
		return proposedList(prior, config, nb.block.proposedNew)
	case nestMap:
		return proposedMap(prior, config, nb.block.proposedNew)
	case nestSet:
		return proposedSet(prior, config, nb.block.proposedNew, nb.block.couldBecome)
	}
	return config
}

// proposedAttrs merges the attributes of one object.
func proposedAttrs(attrs map[string]*attribute, prior, config cty.Value) map[string]cty.Value {
	out := make(map[string]cty.Value, len(attrs))
	for name, a := range attrs {
		var pv cty.Value
		switch {
		case prior.IsNull():
			pv = cty.NullVal(a.ty)
		case !prior.IsKnown():
			pv = cty.UnknownVal(a.ty)
		default:
			pv = prior.GetAttr(name)
		}
		cv := config.GetAttr(name)
		switch {
		case a.computed && cv.IsNull():
			out[name] = pv
			if a.optional && a.nested != nil && a.nested.setByConfig(pv) {
				out[name] = cv
			}
		case a.nested != nil:
			out[name] = a.nested.proposedNew(pv, cv)
		default:
			out[name] = cv
		}
	}
	return out
}

func (o *object) proposedNew(prior, config cty.Value) cty.Value {
	if !config.IsKnown() {
		return config
	}
	one := func(p, c cty.Value) cty.Value {
		if c.IsNull() || !c.IsKnown() {
			return c
		}
		return cty.ObjectVal(proposedAttrs(o.attrs, p, c))
	}
	switch o.nesting {
	case nestList:
		return proposedList(prior, config, one)
	case nestMap:
		return proposedMap(prior, config, one)
	case nestSet:
		return proposedSet(prior, config, one, o.couldBecome)
	}
	return one(prior, config)
}

// setByConfig reports whether a prior nested value holds a set attribute the provider does not
// compute: such a value came from a configuration.
func (o *object) setByConfig(v cty.Value) bool {
	if v.IsNull() || !v.IsKnown() {
		return false
	}
	check := func(e cty.Value) bool {
		if e.IsNull() || !e.IsKnown() {
			return false
		}
		for name, a := range o.attrs {
			av := e.GetAttr(name)
			if av.IsNull() {
				continue
			}
			if !a.computed || (a.nested != nil && a.nested.setByConfig(av)) {
				return true
			}
		}
		return false
	}
	if o.nesting == nestSingle {
		return check(v)
	}
	for it := v.ElementIterator(); it.Next(); {
		if _, e := it.Element(); check(e) {
			return true
		}
	}
	return false
}

func proposedList(prior, config cty.Value, f func(p, c cty.Value) cty.Value) cty.Value {
	if config.IsNull() || config.LengthInt() == 0 {
		return config
	}
	var out []cty.Value
	for it := config.ElementIterator(); it.Next(); {
		idx, cv := it.Element()
		if prior.IsKnown() && (prior.IsNull() || !prior.HasIndex(idx).True()) {
			out = append(out, cv)
			continue
		}
		out = append(out, f(prior.Index(idx), cv))
	}
	if config.Type().IsTupleType() {
		return cty.TupleVal(out)
	}
	return cty.ListVal(out)
}

func proposedMap(prior, config cty.Value, f func(p, c cty.Value) cty.Value) cty.Value {
	if config.IsNull() || config.LengthInt() == 0 {
		return config
	}
	priorMap := map[string]cty.Value{}
	if !prior.IsNull() && prior.IsKnown() && prior.LengthInt() > 0 {
		priorMap = prior.AsValueMap()
	}
	out := map[string]cty.Value{}
	for k, cv := range config.AsValueMap() {
		pv, ok := priorMap[k]
		switch {
		case ok:
		case !prior.IsKnown():
			pv = cty.UnknownVal(cv.Type())
		default:
			pv = cty.NullVal(cv.Type())
		}
		out[k] = f(pv, cv)
	}
	if config.Type().IsObjectType() {
		return cty.ObjectVal(out)
	}
	return cty.MapVal(out)
}

// proposedSet pairs each configured element with an unused prior element it could have been
// derived from; elements of sets have no other identity.
func proposedSet(prior, config cty.Value, f func(p, c cty.Value) cty.Value, couldBecome func(p, c cty.Value) bool) cty.Value {
	if config.IsNull() || config.LengthInt() == 0 {
		return config
	}
	var priors []cty.Value
	if prior.IsKnown() && !prior.IsNull() {
		priors = prior.AsValueSlice()
	}
	used := make([]bool, len(priors))
	var out []cty.Value
	for _, cv := range config.AsValueSlice() {
		pv := cty.NullVal(cv.Type())
		for i, candidate := range priors {
			if !used[i] && couldBecome(candidate, cv) {
				pv, used[i] = candidate, true
				break
			}
		}
		out = append(out, f(pv, cv))
	}
	return cty.SetVal(out)
}

// couldBecome reports whether prior could be what the provider made of config: every
// attribute equal, except computed ones that config leaves null; nested blocks likewise.
func (b *block) couldBecome(prior, config cty.Value) bool {
	if equalValues(prior, config) {
		return true
	}
	if prior.IsNull() || config.IsNull() || !prior.IsKnown() || !config.IsKnown() {
		return false
	}
	if !attrsCouldBecome(b.attrs, prior, config) {
		return false
	}
	for name, nb := range b.blocks {
		pv, cv := prior.GetAttr(name), config.GetAttr(name)
		if equalValues(pv, cv) {
			continue
		}
		switch nb.nesting {
		case nestSingle, nestGroup:
			if !nb.block.couldBecome(pv, cv) {
				return false
			}
		case nestList, nestMap:
			if !pairwise(pv, cv, nb.block.couldBecome) {
				return false
			}
		default:
			return false // nested sets must be equal
		}
	}
	return true
}

func (o *object) couldBecome(prior, config cty.Value) bool {
	if equalValues(prior, config) {
		return true
	}
	if prior.IsNull() || config.IsNull() || !prior.IsKnown() || !config.IsKnown() {
		return false
	}
	return attrsCouldBecome(o.attrs, prior, config)
}

func attrsCouldBecome(attrs map[string]*attribute, prior, config cty.Value) bool {
	for name, a := range attrs {
		pv, cv := prior.GetAttr(name), config.GetAttr(name)
		switch {
		case equalValues(pv, cv):
		case a.computed && cv.IsNull():
		case a.nested != nil && a.nested.nesting == nestSingle:
			if !a.nested.couldBecome(pv, cv) {
				return false
			}
		case a.nested != nil && (a.nested.nesting == nestList || a.nested.nesting == nestMap):
			if !pairwise(pv, cv, a.nested.couldBecome) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// pairwise compares two lists (by index) or maps (by key) element by element.
func pairwise(prior, config cty.Value, f func(p, c cty.Value) bool) bool {
	if prior.IsNull() || config.IsNull() || !prior.IsKnown() || !config.IsKnown() || prior.LengthInt() != config.LengthInt() {
		return false
	}
	for it := config.ElementIterator(); it.Next(); {
		k, cv := it.Element()
		if !prior.HasIndex(k).True() || !f(prior.Index(k), cv) {
			return false
		}
	}
	return true
}
