package lambda

import (
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/value"
)

// fnType is what differs between the function types served: property names, defaults, the
// token form of the Arn output.
type fnType struct {
	name      string // the resource type
	source    string // the inline code property under Code
	env       []string
	nameProp  string
	needsName bool // FunctionName is required (Function Compute), and is the function's name
	// ignored are properties accepted without effect: cairn has one copy of each function and
	// no cloud account around it.
	ignored []string
}

var (
	awsFunction = fnType{name: "AWS::Lambda::Function", source: "ZipFile", env: []string{"Environment", "Variables"},
		nameProp: "FunctionName",
		ignored: []string{"Role", "Description", "Tags", "Architectures", "TracingConfig", "LoggingConfig",
			"EphemeralStorage", "PackageType", "RuntimeManagementPolicy", "ReservedConcurrentExecutions"}}
	fcFunction = fnType{name: "ALIYUN::FC::Function", source: "SourceCode", env: []string{"EnvironmentVariables"},
		nameProp: "FunctionName", needsName: true,
		ignored: []string{"ServiceName", "Description", "InstanceConcurrency", "InstanceType", "Initializer",
			"InitializationTimeout", "CAPort", "AsyncConfiguration", "InstanceLifecycleConfig"}}
)

// Lambda's and Function Compute's limits.
const (
	defaultTimeout = 3 // seconds, both services' default
	maxTimeout     = 900
	defaultMemory  = 128
	minMemory      = 128
	maxMemory      = 10240
)

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// spec is a function resource's properties, decoded.
type spec struct {
	Name     string // "" unless the template names the function
	Runtime  string
	Handler  string
	Source   string // the inline code
	Timeout  int    // seconds
	MemoryMB int
	Env      map[string]string
}

// decode reads props of a function of type t. Failures name the property; unknown values
// (a preview) are skipped and leave known false.
func (t fnType) decode(props cty.Value) (s spec, known bool, failures, warnings []provider.CheckFailure) {
	fail := func(prop, format string, args ...any) {
		failures = append(failures, provider.CheckFailure{Property: prop, Reason: fmt.Sprintf(format, args...)})
	}
	props, _ = props.UnmarkDeep()
	known = true
	if props == cty.NilVal || props.IsNull() || !props.IsKnown() || !(props.Type().IsObjectType() || props.Type().IsMapType()) {
		if props != cty.NilVal && !props.IsKnown() {
			return s, false, nil, nil
		}
		fail("", "Properties must be an object with Code, Handler and Runtime")
		return s, true, failures, nil
	}
	str := func(name string, required bool) string {
		v, ok := value.Get(props, name)
		switch {
		case !ok || v.IsNull():
			if required {
				fail(name, "%s is required", name)
			}
			return ""
		case !v.IsWhollyKnown():
			known = false
			return ""
		case v.Type() != cty.String:
			fail(name, "%s must be a string", name)
			return ""
		}
		return v.AsString()
	}
	num := func(name string, def, lo, hi int) int {
		v, ok := value.Get(props, name)
		if !ok || v.IsNull() {
			return def
		}
		if !v.IsWhollyKnown() {
			known = false
			return def
		}
		n, err := integer(v)
		if err != nil || n < lo || n > hi {
			fail(name, "%s must be a whole number from %d to %d", name, lo, hi)
			return def
		}
		return n
	}
	s.Runtime = str("Runtime", true)
	s.Handler = str("Handler", true)
	s.Name = str(t.nameProp, t.needsName)
	s.Timeout = num("Timeout", defaultTimeout, 1, maxTimeout)
	s.MemoryMB = num("MemorySize", defaultMemory, minMemory, maxMemory)
	if s.Name != "" && !validName.MatchString(s.Name) {
		fail(t.nameProp, "%s %q is invalid: use 1 to 64 letters, digits, '-' or '_'", t.nameProp, s.Name)
	}
	if s.Runtime != "" && runtimeKind(s.Runtime) == "" {
		fail("Runtime", "cairn runs nodejs and python3 runtimes (such as nodejs20.x, python3.12), not %q", s.Runtime)
	}
	s.Source = t.code(props, &known, fail)
	if s.Handler != "" && s.Source != "" {
		if mod, _, _ := strings.Cut(s.Handler, "."); mod != "index" || !strings.Contains(s.Handler, ".") {
			fail("Handler", "inline code is the module index (index.js, index.py): the handler must be index.FUNCTION, not %q", s.Handler)
		}
	}
	s.Env = t.environment(props, &known, fail)
	for _, k := range value.Keys(props) {
		if !t.handled(k) {
			warnings = append(warnings, provider.CheckFailure{Property: k,
				Reason: fmt.Sprintf("cairn ignores %s: it runs the function on this machine", k)})
		}
	}
	return s, known, failures, warnings
}

// handled reports whether property k has a meaning (or a known absence of one) for cairn.
func (t fnType) handled(k string) bool {
	switch k {
	case "Code", "Runtime", "Handler", "Timeout", "MemorySize", t.nameProp, t.env[0]:
		return true
	}
	for _, i := range t.ignored {
		if i == k {
			return true
		}
	}
	return false
}

// code is the inline source under Code.
func (t fnType) code(props cty.Value, known *bool, fail func(string, string, ...any)) string {
	code, ok := value.Get(props, "Code")
	if !ok || code.IsNull() {
		fail("Code", "Code is required: cairn runs inline code, Code.%s", t.source)
		return ""
	}
	if !code.IsWhollyKnown() {
		*known = false
		return ""
	}
	if !code.Type().IsObjectType() && !code.Type().IsMapType() {
		fail("Code", "Code must be an object with %s", t.source)
		return ""
	}
	src, ok := value.Get(code, t.source)
	if !ok || src.IsNull() {
		fail("Code", "cairn runs inline code only: give Code.%s (code in a bucket or an image is not reachable from here; "+
			"for code in a directory, create the function with `cairn function create` and give its ARN as the ServiceToken)", t.source)
		return ""
	}
	if src.Type() != cty.String || src.AsString() == "" {
		fail("Code."+t.source, "Code.%s must be the function's source text", t.source)
		return ""
	}
	return src.AsString()
}

// environment is the map at t.env: string values (numbers and booleans as their text).
func (t fnType) environment(props cty.Value, known *bool, fail func(string, string, ...any)) map[string]string {
	v := props
	for _, name := range t.env {
		next, ok := value.Get(v, name)
		if !ok || next.IsNull() {
			return nil
		}
		if !next.IsWhollyKnown() {
			*known = false
			return nil
		}
		v = next
	}
	path := strings.Join(t.env, ".")
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		fail(path, "%s must be an object of names and values", path)
		return nil
	}
	env := map[string]string{}
	for k, val := range v.AsValueMap() {
		val = value.Stringify(val)
		if val.IsNull() || val.Type() != cty.String {
			fail(path+"."+k, "the value of %s must be a string", k)
			continue
		}
		env[k] = val.AsString()
	}
	return env
}

// integer reads a whole number given as a number or as its text ("30"), as CloudFormation
// accepts both.
func integer(v cty.Value) (int, error) {
	switch v.Type() {
	case cty.Number:
		bf := v.AsBigFloat()
		if !bf.IsInt() {
			return 0, fmt.Errorf("not a whole number")
		}
		n, acc := bf.Int64()
		if acc != big.Exact {
			return 0, fmt.Errorf("out of range")
		}
		return int(n), nil
	case cty.String:
		return strconv.Atoi(v.AsString())
	}
	return 0, fmt.Errorf("not a number")
}

// runtimeKind is the runtime family cairn runs rt with: nodejs or python, "" for none.
func runtimeKind(rt string) string {
	switch {
	case strings.HasPrefix(rt, "nodejs"):
		return "nodejs"
	case strings.HasPrefix(rt, "python3"):
		return "python"
	}
	return ""
}
