package tflang

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/terraform-linters/tflint/terraform/lang"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/value"
)

// terraformTable is terraform's function table, as tflint carries it (terraform/lang): every
// function of terraform 1.11, also under core::, with terraform's exact semantics. Its
// functions are immutable values, so one table serves every evaluation; those that read the
// disk or the marks are replaced below.
var terraformTable = sync.OnceValue(func() map[string]function.Function { return (&lang.Scope{}).Functions() })

// impureFunctions give a different result at each call: unknown during a preview (terraform's
// plan), evaluated when applied.
var impureFunctions = []string{"bcrypt", "timestamp", "uuid"}

// tableEnv is what a table's functions depend on besides their arguments.
type tableEnv struct {
	files sentFiles
	// self is the table templates render with (the one being built, wrapped as the
	// evaluation's): nil for the table itself unwrapped.
	self func() map[string]function.Function
	// planning reports whether the evaluation is a preview; nil never.
	planning func() bool
	// planTime is plantimestamp(): when the request (a preview's or a deploy's plan) began;
	// zero, the time of the call.
	planTime time.Time
	// meter is the meter of the evaluation using the table; nil, a fresh one per call.
	meter func() *budget.Meter
}

// buildFunctions is terraform's built-in functions, the filesystem ones reading the
// configuration's files (keys relative to the directory it was read from; root is the root
// module's directory among them, terraform's working directory). FUNCTIONS.md lists them.
// The evaluator uses them wrapped with the budget (see funcTable).
func buildFunctions(env tableEnv) map[string]function.Function {
	base := terraformTable()
	out := make(map[string]function.Function, len(base))
	for name, f := range base {
		out[name] = f
	}
	self := env.self
	if self == nil {
		self = func() map[string]function.Function { return out }
	}
	c := env.files
	c.meter = env.meter
	own := map[string]function.Function{
		"file": c.fileFunc(false), "filebase64": c.fileFunc(true), "fileexists": c.fileExistsFunc(),
		"fileset": c.fileSetFunc(), "abspath": c.absPathFunc(), "pathexpand": c.pathExpandFunc(),
		// templates render with this table, parsed through the guard (templates.go)
		"templatefile": c.templateFileFunc(self), "templatestring": c.templateStringFunc(self),
		"plantimestamp": planTimestampFunc(env.planTime),
		"sensitive":     sensitiveFunc, "nonsensitive": nonsensitiveFunc, "issensitive": issensitiveFunc,
	}
	for name, f := range c.hashes() {
		own[name] = f
	}
	if env.planning != nil {
		for _, name := range impureFunctions {
			own[name] = unknownWhen(out[name], env.planning)
		}
	}
	for name, f := range own {
		out[name] = f
		out["core::"+name] = f
	}
	return out
}

// pathExpandFunc is pathexpand: terraform replaces a leading "~" with the home directory of
// the user running it. In-process (Options.ClientHome) that is this process's; a shared
// server's home is not its user's, and the client's is not known there: a path starting with
// "~" or "~/" is refused with a message saying so, rather than expanded to a directory of the
// server. "~user" is refused as terraform refuses it; any other path is returned as it is.
func (c sentFiles) pathExpandFunc() function.Function {
	return function.New(&function.Spec{
		Params:       []function.Parameter{{Name: "path", Type: cty.String}},
		Type:         function.StaticReturnType(cty.String),
		RefineResult: func(b *cty.RefinementBuilder) *cty.RefinementBuilder { return b.NotNull() },
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			p := args[0].AsString()
			switch {
			case !strings.HasPrefix(p, "~"):
				return args[0], nil
			case len(p) > 1 && p[1] != '/' && p[1] != '\\':
				return cty.UnknownVal(cty.String), errors.New("cannot expand user-specific home dir")
			}
			if x, ok := c.expandHome(p); ok {
				return cty.StringVal(x), nil
			}
			return cty.UnknownVal(cty.String), function.NewArgErrorf(0, "cannot expand %q on a cairn server: \"~\" is the home directory of whoever runs terraform, which a shared server does not know; write the path relative to the configuration (path.module) instead", p)
		},
	})
}

// planTimestampFunc is plantimestamp: the time the plan began, which tflint leaves unknown
// (a linter has no plan).
func planTimestampFunc(at time.Time) function.Function {
	return function.New(&function.Spec{
		Type: function.StaticReturnType(cty.String),
		Impl: func([]cty.Value, cty.Type) (cty.Value, error) {
			t := at
			if t.IsZero() {
				t = time.Now()
			}
			return cty.StringVal(t.UTC().Format(time.RFC3339)), nil
		},
	})
}

// unknownWhen is f, returning an unknown value of its type while planning says so.
func unknownWhen(f function.Function, planning func() bool) function.Function {
	unknown := function.Unpredictable(f)
	return function.New(&function.Spec{
		Params: f.Params(), VarParam: f.VarParam(),
		Type: f.ReturnTypeForValues,
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if planning() {
				return unknown.Call(args)
			}
			return f.Call(args)
		},
	})
}

// wrapFunctions is fns metered by the meter meter returns; a core:: name is metered as its
// plain name (the budget's checks are by name).
func wrapFunctions(fns map[string]function.Function, meter func() *budget.Meter) map[string]function.Function {
	out := make(map[string]function.Function, len(fns))
	for name, f := range fns {
		out[name] = budget.Wrap(strings.TrimPrefix(name, "core::"), f, meter)
	}
	return out
}

// sensitive, nonsensitive and issensitive are terraform's with cairn's own mark
// (value.Sensitive), which is not tflint's marks.Sensitive: cairn's storage, display and API
// redact by value.Sensitive.
var sensitiveFunc = function.New(&function.Spec{
	Params: []function.Parameter{markParam},
	Type:   func(args []cty.Value) (cty.Type, error) { return args[0].Type(), nil },
	Impl:   func(args []cty.Value, _ cty.Type) (cty.Value, error) { return value.Secret(args[0]), nil },
})

var nonsensitiveFunc = function.New(&function.Spec{
	Params: []function.Parameter{markParam},
	Type:   func(args []cty.Value) (cty.Type, error) { return args[0].Type(), nil },
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		v, marks := args[0].Unmark()
		delete(marks, value.Sensitive)
		return v.WithMarks(marks), nil
	},
})

var issensitiveFunc = function.New(&function.Spec{
	Params: []function.Parameter{markParam},
	Type:   function.StaticReturnType(cty.Bool),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		switch v := args[0]; {
		case v.HasMark(value.Sensitive):
			return cty.True, nil
		case !v.IsKnown():
			return cty.UnknownVal(cty.Bool), nil
		}
		return cty.False, nil
	},
})

var markParam = function.Parameter{Name: "value", Type: cty.DynamicPseudoType,
	AllowMarked: true, AllowNull: true, AllowUnknown: true, AllowDynamicType: true}
