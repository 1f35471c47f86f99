package tfplugin

import (
	"fmt"
	"sort"

	"github.com/zclconf/go-cty/cty"
)

// conform checks a configuration value against the schema before it goes to the provider:
// what terraform's decoder rejects (unexpected arguments, missing required ones, values of the
// wrong type, too few or too many blocks) plus setting an attribute the provider computes
// alone. Configurations the Terraform language decoded with the schema's Spec pass the first
// checks by construction; values from other dialects may not. Unknown values are skipped.
// Messages are terraform's, so that users recognise them. v is unmarked.
func (b *block) conform(v cty.Value, path cty.Path) []problem {
	if v == cty.NilVal || v.IsNull() || !v.IsKnown() {
		return nil
	}
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		return []problem{{path, "Unsupported block type: an object is required"}}
	}
	in := v.AsValueMap()
	var probs []problem
	var names []string
	for k := range in {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if b.attrs[k] == nil && b.blocks[k] == nil {
			probs = append(probs, problem{path.GetAttr(k), fmt.Sprintf("Unsupported argument: An argument named %q is not expected here.", k)})
		}
	}
	for name, a := range b.attrs {
		av, ok := in[name]
		if !ok {
			av = cty.NullVal(a.ty)
		}
		probs = append(probs, a.conform(name, av, path.GetAttr(name))...)
	}
	for name, nb := range b.blocks {
		bv, ok := in[name]
		if !ok {
			bv = cty.NullVal(nb.block.ty)
		}
		probs = append(probs, nb.conform(name, bv, path.GetAttr(name))...)
	}
	return probs
}

func (a *attribute) conform(name string, v cty.Value, path cty.Path) []problem {
	switch {
	case !v.IsKnown():
		return nil
	case a.computed && !a.optional && !a.required && !v.IsNull():
		return []problem{{path, "Invalid Configuration for Read-Only Attribute: Cannot set value for this attribute as the provider has marked it as read-only. Remove the configuration line setting the value."}}
	case a.required && v.IsNull():
		return []problem{{path, fmt.Sprintf("Missing required argument: The argument %q is required, but no definition was found.", name)}}
	case v.IsNull():
		return nil
	}
	fv, err := fitType(v, a.ty, nil)
	if err != nil {
		return []problem{{path, "Incorrect attribute value type: " + pathless(err)}}
	}
	if a.nested == nil || !fv.IsKnown() {
		return nil
	}
	var probs []problem
	one := func(e cty.Value, p cty.Path) {
		if e.IsNull() || !e.IsKnown() {
			return
		}
		for n, na := range a.nested.attrs {
			probs = append(probs, na.conform(n, e.GetAttr(n), p.GetAttr(n))...)
		}
	}
	if a.nested.nesting == nestSingle {
		one(fv, path)
		return probs
	}
	for it := fv.ElementIterator(); it.Next(); {
		k, e := it.Element()
		if a.nested.nesting == nestSet {
			one(e, path)
		} else {
			one(e, path.Index(k))
		}
	}
	return probs
}

func (nb *nestedBlock) conform(name string, v cty.Value, path cty.Path) []problem {
	if !v.IsKnown() {
		return nil
	}
	switch nb.nesting {
	case nestSingle, nestGroup:
		if v.IsNull() {
			if nb.min > 0 {
				return []problem{{path, fmt.Sprintf("Missing required block: At least %d %q block is required.", nb.min, name)}}
			}
			return nil
		}
		return nb.block.conform(v, path)
	}
	n := 0
	if !v.IsNull() {
		t := v.Type()
		if !(t.IsListType() || t.IsSetType() || t.IsTupleType() || t.IsMapType() || t.IsObjectType()) {
			return []problem{{path, fmt.Sprintf("Unsupported block type: %q is a collection of blocks", name)}}
		}
		n = v.LengthInt()
	}
	var probs []problem
	if nb.min > 0 && n < nb.min {
		probs = append(probs, problem{path, fmt.Sprintf("Insufficient %s blocks: At least %d %q blocks are required.", name, nb.min, name)})
	}
	if nb.max > 0 && n > nb.max {
		probs = append(probs, problem{path, fmt.Sprintf("Too many %s blocks: No more than %d %q blocks are allowed.", name, nb.max, name)})
	}
	if v.IsNull() {
		return probs
	}
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		p := path.Index(k)
		if v.Type().IsSetType() {
			p = path
		}
		probs = append(probs, nb.block.conform(e, p)...)
	}
	return probs
}

// pathless is an error's message without the path prefix a cty.PathError would print.
func pathless(err error) string {
	if pe, ok := err.(cty.PathError); ok {
		if len(pe.Path) > 0 {
			return pathString(pe.Path) + ": " + pe.Error()
		}
	}
	return err.Error()
}
