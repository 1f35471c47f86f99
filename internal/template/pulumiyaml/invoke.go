package pulumiyaml

import (
	"maps"
	"slices"
	"strings"

	"github.com/pulumi/pulumi-yaml/pkg/pulumiyaml/syntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// An invoke (`fn::invoke: {function, arguments, options, return}`, or the short form
// `fn::<pkg>:<function>: {arguments}`) calls a provider function. It becomes a data resource
// of the stack (template.Data, type the function token, properties the arguments), read
// through the provider's Invoke as the engine reads data sources: after what its arguments
// and options depend on, with unknown arguments in a preview read at deploy time. The
// expression evaluates to that resource's result, or to its `return` property.

// invokePrefix starts the name of an invoke's data resource, followed by where the call is
// (`fn::invoke@outputs.hello`): unique per call, and never a name a program declares.
const invokePrefix = "fn::invoke@"

// isInvokeName says whether a name is an invoke's data resource.
func isInvokeName(name string) bool { return strings.HasPrefix(name, invokePrefix) }

// reserved says a program may not declare name: cairn's own rows are named so (an invoke's
// data resource, an old copy awaiting deletion).
func reserved(name string) bool {
	return isInvokeName(name) || strings.Contains(name, template.DeposedMark)
}

// invokeExpr is one invoke call.
type invokeExpr struct {
	name      string // its data resource
	token     string // the function, as written
	args      expr
	ret       string   // the return option: one property of the result, "" for all of it
	provider  string   // options.provider: a provider resource
	version   string   // options.version
	dependsOn []string // options.dependsOn
	self      *access  // the access to its own result, through which deps find it
	scalar    bool     // the schema's outputs are not an object: the result's one value is returned
	where
}

func (inv *invokeExpr) accesses(f func(*access)) {
	inv.args.accesses(f)
	for _, name := range append(slices.Clone(inv.dependsOn), inv.provider) {
		if name != "" {
			f(&access{text: name, root: name, where: inv.where})
		}
	}
	f(inv.self)
}

func (inv *invokeExpr) eval(ev *evaluator) (cty.Value, diag.Diagnostics) {
	rv, ok := ev.scope.Resource(inv.name)
	if !ok {
		return cty.DynamicVal, nil
	}
	out := rv.Outputs
	if inv.scalar {
		return inv.single(out)
	}
	if inv.ret == "" {
		return out, nil
	}
	plain, marks := out.Unmark()
	if !plain.IsKnown() {
		return cty.DynamicVal.WithMarks(marks), nil
	}
	v, found := value.Get(plain, inv.ret)
	if !found {
		return cty.DynamicVal, diag.Diagnostics{diag.Errorf(inv.rng, inv.path, "fn::invoke of %s: the result has no property %q to return", inv.token, inv.ret)}
	}
	return v.WithMarks(marks), nil
}

// single is the one value of a scalar-returning function's result, secret when anything in
// the result was (the Go SDK's InvokePackageRaw reports a secret result as a whole). The
// name of its one property is the plugin's choice, so it is not looked at.
func (inv *invokeExpr) single(out cty.Value) (cty.Value, diag.Diagnostics) {
	if inv.ret != "" {
		return cty.DynamicVal, diag.Diagnostics{diag.Errorf(inv.rng, inv.path, "fn::invoke of %s has a non-object return value; cannot specify property '%s'", inv.token, inv.ret)}
	}
	plain, marks := out.Unmark()
	if !plain.IsKnown() || plain.IsNull() {
		return cty.DynamicVal.WithMarks(marks), nil
	}
	if !plain.Type().IsObjectType() && !plain.Type().IsMapType() {
		return out, nil
	}
	secret := value.IsSecret(out)
	attrs := plain.AsValueMap()
	if len(attrs) == 0 {
		return cty.NullVal(cty.DynamicPseudoType), nil
	}
	var ds diag.Diagnostics
	if len(attrs) > 1 { // pulumi-yaml warns and takes one of them
		d := diag.Errorf(inv.rng, inv.path, "fn::invoke of %s expected a single return value, got %d properties: the first by name is used", inv.token, len(attrs))
		d.Severity = diag.Warning
		ds = append(ds, d)
	}
	v := attrs[slices.Min(slices.Collect(maps.Keys(attrs)))]
	if secret {
		v, _ = v.UnmarkDeep()
		v = value.Secret(v)
	}
	return v, ds
}

// isInvoke says whether a built-in call key is an invoke: fn::invoke, or fn::<pkg>:<fn>.
func isInvoke(key string) bool {
	lower := strings.ToLower(key)
	return lower == "fn::invoke" || strings.Contains(strings.TrimPrefix(lower, "fn::"), ":")
}

// toInvoke reads an invoke call: e is the fn:: key and its value.
func toInvoke(e entry) (expr, diag.Diagnostics) {
	at := where{rng: e.at.rng, path: e.at.path}
	inv := &invokeExpr{name: invokePrefix + e.at.path, args: objectExpr{}, where: at}
	inv.self = &access{text: inv.name, root: inv.name, where: at, inv: inv}
	var ds diag.Diagnostics
	if !strings.EqualFold(e.key, "fn::invoke") { // the short form: the arguments only
		inv.token = e.key[len("fn::"):]
		x, d := toExpr(e.value, e.at.path, nil, "")
		inv.args = x
		return inv, append(ds, d...)
	}
	body, ok := e.value.(*syntax.ObjectNode)
	if !ok {
		return inv, diag.Diagnostics{diag.Errorf(at.rng, at.path, "fn::invoke must be an object with function, arguments, options and return")}
	}
	for _, f := range entries(body, e.at.path) {
		fat := where{rng: rangeOf(f.value), path: f.at.path}
		switch f.key {
		case "function":
			s, ok := f.value.(*syntax.StringNode)
			if !ok || s.Value() == "" {
				ds = append(ds, diag.Errorf(fat.rng, fat.path, "function must be a function token such as aws:ec2:getAmi"))
				continue
			}
			inv.token = s.Value()
		case "arguments":
			x, d := toExpr(f.value, f.at.path, nil, "")
			inv.args, ds = x, append(ds, d...)
		case "return":
			s, ok := f.value.(*syntax.StringNode)
			if !ok {
				ds = append(ds, diag.Errorf(fat.rng, fat.path, "return must be the name of a property of the result"))
				continue
			}
			inv.ret = s.Value()
		case "options":
			ds = append(ds, inv.options(f)...)
		default:
			ds = append(ds, diag.Errorf(f.at.rng, f.at.path, "unknown fn::invoke property %q (expected function, arguments, options or return)", f.key))
		}
	}
	if inv.token == "" {
		ds = append(ds, diag.Errorf(at.rng, at.path, "fn::invoke needs a function"))
	}
	return inv, ds
}

// options reads an invoke's options: provider, version, dependsOn; parent and
// pluginDownloadURL say nothing to a call cairn makes.
func (inv *invokeExpr) options(e entry) diag.Diagnostics {
	obj, ok := e.value.(*syntax.ObjectNode)
	if !ok {
		return diag.Diagnostics{diag.Errorf(e.at.rng, e.at.path, "options must be an object")}
	}
	var ds diag.Diagnostics
	ref := func(n syntax.Node, path string) string {
		s, ok := n.(*syntax.StringNode)
		if ok {
			x, d := parseString(s.Value(), where{rng: rangeOf(n), path: path})
			if a, isAccess := x.(*access); !d.HasErrors() && isAccess && len(a.steps) == 0 {
				return a.root
			}
		}
		ds = append(ds, diag.Errorf(rangeOf(n), path, "expected a resource reference such as ${name}"))
		return ""
	}
	for _, f := range entries(obj, e.at.path) {
		switch f.key {
		case "provider":
			inv.provider = ref(f.value, f.at.path)
		case "version":
			s, ok := f.value.(*syntax.StringNode)
			if !ok || s.Value() == "" {
				ds = append(ds, diag.Errorf(rangeOf(f.value), f.at.path, "version must be a version string such as 4.16.0"))
				continue
			}
			inv.version = s.Value()
		case "dependsOn":
			l, ok := f.value.(*syntax.ListNode)
			if !ok {
				ds = append(ds, diag.Errorf(rangeOf(f.value), f.at.path, "dependsOn must be a list of resources (${name})"))
				continue
			}
			for i := 0; i < l.Len(); i++ {
				if name := ref(l.Index(i), f.at.path); name != "" {
					inv.dependsOn = append(inv.dependsOn, name)
				}
			}
		case "parent", "pluginDownloadURL":
			// a parent names no URN of a call; cairn never downloads a plugin
		default:
			ds = append(ds, diag.Errorf(f.at.rng, f.at.path, "unknown fn::invoke option %q", f.key))
		}
	}
	return ds
}

// invokeResources makes the data resource of every invoke the program uses, in name order.
func (p *parser) invokeResources() []*template.Resource {
	var out []*template.Resource
	for _, name := range slices.Sorted(maps.Keys(p.invokes)) {
		inv := p.invokes[name]
		r := &template.Resource{Name: name, Type: inv.token, Mode: template.Data, Properties: rootExpr{inv.args, p.prog, inv.where},
			Range: inv.rng, TypeRange: inv.rng, DeletionPolicy: template.Delete, UpdateReplacePolicy: template.Delete,
			PropertyRanges: map[string]diag.Range{"": inv.rng}}
		deps := map[string]bool{}
		for _, d := range p.deps(inv.args, inv.where) {
			deps[d] = true
		}
		for _, d := range inv.dependsOn {
			deps[p.prog.nameOf(d)] = true
		}
		if inv.provider != "" {
			deps[p.prog.nameOf(inv.provider)] = true
			p.providerOpt[name] = p.prog.nameOf(inv.provider)
		}
		if !p.prog.resources[inv.provider] && inv.provider != "" {
			p.errorf(inv.where, "${%s} is not a resource", inv.provider)
		}
		r.DependsOn = slices.Sorted(maps.Keys(deps))
		if inv.version != "" {
			p.require(r, inv.version, inv.where)
		}
		out = append(out, r)
	}
	return out
}
