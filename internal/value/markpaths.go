package value

import (
	"math/big"
	"strconv"

	"github.com/zclconf/go-cty/cty"
)

// MarkPaths marks the parts of v at the given paths, as v.MarkWithPaths does, in time
// linear in the size of v and the paths: cty's MarkWithPaths compares every node with every
// path, so a state with thousands of sensitive list elements took minutes to read. Paths
// that v lacks are ignored. Unlike MarkWithPaths, a map key is reached by an attribute step
// and an object attribute by a string index step: a stored value (FromJSON) has objects
// where a provider's value has maps, and the paths of one apply to the other. Paths with
// unknown steps are not supported: stored values hold none.
func MarkPaths(v cty.Value, pvm []cty.PathValueMarks) cty.Value {
	if len(pvm) == 0 {
		return v
	}
	root := &markNode{}
	for _, pm := range pvm {
		n := root
		ok := true
		for _, st := range pm.Path {
			if n, ok = n.child(st); !ok {
				break
			}
		}
		if ok {
			n.marks = append(n.marks, pm.Marks)
		}
	}
	return root.apply(v)
}

// markNode is one step of the paths to mark: the marks for the value reached so far and the
// steps that go on from it.
type markNode struct {
	marks []cty.ValueMarks
	attrs map[string]*markNode
	index map[string]*markNode // by indexKey
}

func (n *markNode) child(st cty.PathStep) (*markNode, bool) {
	switch st := st.(type) {
	case cty.GetAttrStep:
		if n.attrs == nil {
			n.attrs = map[string]*markNode{}
		}
		c := n.attrs[st.Name]
		if c == nil {
			c = &markNode{}
			n.attrs[st.Name] = c
		}
		return c, true
	case cty.IndexStep:
		k, ok := indexKey(st.Key)
		if !ok {
			return nil, false
		}
		if n.index == nil {
			n.index = map[string]*markNode{}
		}
		c := n.index[k]
		if c == nil {
			c = &markNode{}
			n.index[k] = c
		}
		return c, true
	}
	return nil, false
}

// indexKey is an index step's key as a map key: numbers (list and tuple indexes) and strings
// (map keys) never collide.
func indexKey(k cty.Value) (string, bool) {
	k, _ = k.Unmark()
	if !k.IsKnown() || k.IsNull() {
		return "", false
	}
	switch k.Type() {
	case cty.String:
		return "s" + k.AsString(), true
	case cty.Number:
		f := k.AsBigFloat()
		if i, acc := f.Int64(); acc == big.Exact {
			return "n" + strconv.FormatInt(i, 10), true
		}
		return "n" + f.Text('g', -1), true
	case cty.Bool:
		if k.True() {
			return "btrue", true
		}
		return "bfalse", true
	}
	return "", false
}

func (n *markNode) apply(v cty.Value) cty.Value {
	if len(n.attrs) > 0 || len(n.index) > 0 {
		v = n.applyInside(v)
	}
	for _, m := range n.marks {
		v = v.WithMarks(m)
	}
	return v
}

// applyInside marks the parts of v that n's steps reach, rebuilding v around them once.
func (n *markNode) applyInside(v cty.Value) cty.Value {
	inner, marks := v.Unmark()
	if !inner.IsKnown() || inner.IsNull() {
		return v
	}
	t := inner.Type()
	var out cty.Value
	switch {
	case t.IsObjectType():
		// Stored values are objects where the provider had maps (FromJSON), and their paths
		// name map keys as attributes (Unmarshal): a key reaches an attribute either way.
		m := inner.AsValueMap()
		for name, ev := range m {
			if c := n.attrs[name]; c != nil {
				ev = c.apply(ev)
			}
			if c := n.index["s"+name]; c != nil {
				ev = c.apply(ev)
			}
			m[name] = ev
		}
		out = cty.ObjectVal(m)
	case (t.IsListType() || t.IsTupleType()) && len(n.index) > 0 && inner.LengthInt() > 0:
		elems := inner.AsValueSlice()
		for i := range elems {
			if c := n.index[indexKey0(i)]; c != nil {
				elems[i] = c.apply(elems[i])
			}
		}
		if t.IsListType() {
			out = cty.ListVal(elems)
		} else {
			out = cty.TupleVal(elems)
		}
	case t.IsMapType() && inner.LengthInt() > 0:
		m := inner.AsValueMap()
		for k, ev := range m {
			if c := n.index["s"+k]; c != nil {
				ev = c.apply(ev)
			}
			if c := n.attrs[k]; c != nil {
				ev = c.apply(ev)
			}
			m[k] = ev
		}
		out = cty.MapVal(m)
	case t.IsSetType() && len(n.index) > 0 && inner.LengthInt() > 0:
		// A set cannot hold marked elements: cty moves their marks to the set, as
		// MarkWithPaths does.
		elems := inner.AsValueSlice()
		for i, ev := range elems {
			if k, ok := indexKey(ev); ok {
				if c := n.index[k]; c != nil {
					elems[i] = c.apply(ev)
				}
			}
		}
		out = cty.SetVal(elems)
	default:
		return v
	}
	return out.WithMarks(marks)
}

func indexKey0(i int) string { return "n" + strconv.Itoa(i) }
