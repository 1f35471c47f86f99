package tfplugin

import (
	"fmt"

	"github.com/zclconf/go-cty/cty"
)

// problem is one way a provider broke the protocol's rules, at a path of the value.
type problem struct {
	path cty.Path
	msg  string
}

// checkPlan reports where a planned state breaks the rules of PlanResourceChange, as terraform
// does before it trusts a plan ("Provider produced invalid plan"): the provider may only choose
// values for computed attributes the configuration leaves null, may keep a prior value that
// it considers equal to the configured one, and must not plan existence for a configuration
// of absence or the reverse. Sets of nested blocks cannot be correlated and are trusted, as in
// terraform. All values are unmarked and of the block's type.
func (b *block) checkPlan(prior, config, planned cty.Value, path cty.Path) []problem {
	switch {
	case planned.IsNull() && !config.IsNull():
		return []problem{{path, "planned for absence but config wants existence"}}
	case config.IsNull() && !planned.IsNull():
		return []problem{{path, "planned for existence but config wants absence"}}
	case planned.IsNull():
		return nil
	case !planned.IsKnown():
		return []problem{{path, "planned an unknown object"}}
	}
	probs := checkPlanAttrs(b.attrs, prior, config, planned, path)
	for name, nb := range b.blocks {
		p := path.GetAttr(name)
		pv, cv := planned.GetAttr(name), config.GetAttr(name)
		priorV := cty.NullVal(pv.Type())
		if !prior.IsNull() && prior.IsKnown() {
			priorV = prior.GetAttr(name)
		}
		if nb.nesting != nestSingle && pv.IsNull() {
			probs = append(probs, problem{p, "a collection of nested blocks must be empty to mean no blocks, not null"})
			continue
		}
		if equalValues(pv, cv) {
			continue
		}
		if !cv.IsKnown() {
			probs = append(probs, problem{p, "planned a value for a dynamic block whose configuration is unknown"})
			continue
		}
		if !pv.IsKnown() {
			probs = append(probs, problem{p, "planned an unknown value for a configured block"})
			continue
		}
		switch nb.nesting {
		case nestSingle, nestGroup:
			probs = append(probs, nb.block.checkPlan(priorV, cv, pv, p)...)
		case nestList, nestMap:
			if cv.IsNull() {
				cv = nb.emptyValue()
			}
			if pv.LengthInt() != cv.LengthInt() {
				probs = append(probs, problem{p, fmt.Sprintf("block count in plan (%d) disagrees with count in config (%d)", pv.LengthInt(), cv.LengthInt())})
				continue
			}
			for it := pv.ElementIterator(); it.Next(); {
				k, pe := it.Element()
				if !cv.HasIndex(k).True() {
					probs = append(probs, problem{p.Index(k), "planned a block that is not in the configuration"})
					continue
				}
				prE := cty.NullVal(nb.block.ty)
				if !priorV.IsNull() && priorV.IsKnown() && priorV.HasIndex(k).True() {
					prE = priorV.Index(k)
				}
				probs = append(probs, nb.block.checkPlan(prE, cv.Index(k), pe, p.Index(k))...)
			}
		}
	}
	return probs
}

func checkPlanAttrs(attrs map[string]*attribute, prior, config, planned cty.Value, path cty.Path) []problem {
	var probs []problem
	for name, a := range attrs {
		get := func(v cty.Value) cty.Value {
			if v.IsNull() || !v.IsKnown() {
				return cty.NullVal(a.ty)
			}
			return v.GetAttr(name)
		}
		probs = append(probs, a.checkPlan(get(prior), get(config), get(planned), path.GetAttr(name))...)
	}
	return probs
}

func (a *attribute) checkPlan(prior, config, planned cty.Value, path cty.Path) []problem {
	if equalValues(planned, config) {
		return nil
	}
	if equalValues(planned, prior) && !prior.IsNull() && !config.IsNull() {
		return nil // the provider keeps a prior value it considers equal to the configured one
	}
	what := func(s string) []problem {
		if a.sensitive {
			return []problem{{path, "sensitive " + s}}
		}
		return []problem{{path, s}}
	}
	switch {
	case a.writeOnly:
		if !planned.IsNull() {
			return []problem{{path, "planned value for write-only attribute is not null"}}
		}
		return nil
	case a.computed && !a.optional:
		return nil
	case config.IsNull() && a.computed:
		return nil
	case config.IsNull():
		if a.sensitive {
			return what("planned value for a non-computed attribute")
		}
		return what(fmt.Sprintf("planned value %s for a non-computed attribute", show(planned)))
	case a.nested != nil:
		return a.nested.checkPlan(prior, config, planned, path)
	case a.sensitive && prior.IsNull():
		return what("planned value does not match config value")
	case a.sensitive:
		return what("planned value does not match config value nor prior value")
	case prior.IsNull():
		return what(fmt.Sprintf("planned value %s does not match config value %s", show(planned), show(config)))
	}
	return what(fmt.Sprintf("planned value %s does not match config value %s nor prior value %s", show(planned), show(config), show(prior)))
}

func (o *object) checkPlan(prior, config, planned cty.Value, path cty.Path) []problem {
	switch {
	case planned.IsNull() && !config.IsNull():
		return []problem{{path, "planned for absence but config wants existence"}}
	case config.IsNull() && !planned.IsNull():
		return []problem{{path, "planned for existence but config wants absence"}}
	case !config.IsNull() && !planned.IsKnown():
		return []problem{{path, "planned unknown for configured value"}}
	case planned.IsNull():
		return nil
	}
	one := func(pr, c, pl cty.Value, p cty.Path) []problem {
		return checkPlanAttrs(o.attrs, pr, c, pl, p)
	}
	switch o.nesting {
	case nestSingle:
		return one(prior, config, planned, path)
	case nestSet:
		if config.IsKnown() && planned.IsKnown() && planned.LengthInt() != config.LengthInt() {
			return []problem{{path, fmt.Sprintf("count in plan (%d) disagrees with count in config (%d)", planned.LengthInt(), config.LengthInt())}}
		}
		return nil // set elements cannot be correlated; trusted, as in terraform
	}
	if !config.IsKnown() {
		return nil
	}
	if planned.LengthInt() != config.LengthInt() {
		return []problem{{path, fmt.Sprintf("count in plan (%d) disagrees with count in config (%d)", planned.LengthInt(), config.LengthInt())}}
	}
	var probs []problem
	for it := planned.ElementIterator(); it.Next(); {
		k, pe := it.Element()
		if !config.HasIndex(k).True() {
			probs = append(probs, problem{path.Index(k), "planned an element that is not in the configuration"})
			continue
		}
		prE := cty.NullVal(o.objectType())
		if !prior.IsNull() && prior.IsKnown() && prior.HasIndex(k).True() {
			prE = prior.Index(k)
		}
		probs = append(probs, one(prE, config.Index(k), pe, path.Index(k))...)
	}
	return probs
}

// checkApplied reports where the state a provider returned from ApplyResourceChange
// contradicts its plan, as terraform does ("Provider produced inconsistent result after
// apply"): every known planned value must come back unchanged; unknown ones may become
// anything. Sensitive attributes are reported without their values.
func (b *block) checkApplied(planned, actual cty.Value, path cty.Path) []problem {
	switch {
	case planned.IsNull() && !actual.IsNull():
		return []problem{{path, "was absent, but now present"}}
	case !planned.IsNull() && actual.IsNull():
		return []problem{{path, "was present, but now absent"}}
	case planned.IsNull() || !planned.IsKnown():
		return nil
	}
	var probs []problem
	for name, a := range b.attrs {
		p := path.GetAttr(name)
		ps := compatible(planned.GetAttr(name), actual.GetAttr(name), p)
		if len(ps) > 0 && (a.sensitive || (a.nested != nil && a.nested.hasSensitive())) {
			ps = []problem{{p, "inconsistent values for sensitive attribute"}}
		}
		probs = append(probs, ps...)
	}
	for name, nb := range b.blocks {
		p := path.GetAttr(name)
		pv, av := planned.GetAttr(name), actual.GetAttr(name)
		switch {
		case !pv.IsKnown():
		case nb.nesting == nestSingle || nb.nesting == nestGroup:
			probs = append(probs, nb.block.checkApplied(pv, av, p)...)
		case nb.block.sensitive:
			if len(compatible(pv, av, p)) > 0 {
				probs = append(probs, problem{p, "inconsistent values for a block holding sensitive attributes"})
			}
		default:
			probs = append(probs, compatible(pv, av, p)...)
		}
	}
	return probs
}

// compatible compares a planned value with the applied one: known parts must be equal.
func compatible(planned, actual cty.Value, path cty.Path) []problem {
	switch {
	case !planned.IsKnown():
		if actual.IsNull() && !planned.Range().CouldBeNull() {
			return []problem{{path, "was planned as not null, but is now null"}}
		}
		return nil
	case planned.IsNull() && actual.IsNull():
		return nil
	case planned.IsNull() || actual.IsNull() || !actual.IsKnown():
		return []problem{{path, fmt.Sprintf("was %s, but now %s", show(planned), show(actual))}}
	}
	ty := planned.Type()
	switch {
	case ty.IsPrimitiveType() || ty == cty.DynamicPseudoType || !actual.Type().Equals(ty):
		if !equalValues(planned, actual) {
			return []problem{{path, fmt.Sprintf("was %s, but now %s", show(planned), show(actual))}}
		}
		return nil
	case ty.IsSetType():
		if planned.IsWhollyKnown() && !equalValues(planned, actual) {
			return []problem{{path, fmt.Sprintf("planned set element %s does not correlate with any element in actual", show(planned))}}
		}
		return nil
	case ty.IsListType() || ty.IsTupleType():
		if planned.LengthInt() != actual.LengthInt() {
			return []problem{{path, fmt.Sprintf("length changed from %d to %d", planned.LengthInt(), actual.LengthInt())}}
		}
	case ty.IsMapType():
		for it := actual.ElementIterator(); it.Next(); {
			k, _ := it.Element()
			if !planned.HasIndex(k).True() {
				return []problem{{path.Index(k), "new element appeared that was not planned"}}
			}
		}
	}
	var probs []problem
	for it := planned.ElementIterator(); it.Next(); {
		k, pe := it.Element()
		var ae cty.Value
		var p cty.Path
		if ty.IsObjectType() {
			ae, p = actual.GetAttr(k.AsString()), path.GetAttr(k.AsString())
		} else {
			if !actual.HasIndex(k).True() {
				probs = append(probs, problem{path.Index(k), "element has vanished"})
				continue
			}
			ae, p = actual.Index(k), path.Index(k)
		}
		probs = append(probs, compatible(pe, ae, p)...)
	}
	return probs
}
