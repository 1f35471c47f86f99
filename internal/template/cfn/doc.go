// Package cfn parses CloudFormation and Alibaba ROS templates, in JSON or YAML (short-form tags
// such as !Ref and !Sub included), into a template.Stack.
//
// Parse binds the template to a stack: parameters take their values and are checked against
// their constraints, conditions are decided once, resources and outputs whose condition is
// false are dropped, and Fn::If with a decided condition is resolved. What remains of each
// resource's Properties and each output's Value is a template.Expr evaluated later against the
// values of the resources it references (unknown ones give unknown results; secrets stay
// marked). Every diagnostic carries file, line, column and the dotted path of the value.
//
// Every parse and evaluation runs under the budget of its context (internal/budget, given to
// Parse in Options.Context, to Eval by its scope): a document is refused unparsed when its
// text may hold too many nodes or, for JSON, nests too deep, and unconverted when its YAML
// aliases or merge keys expand past the alias-node limit, refer to themselves or nest too
// deep; evaluation checks the depth before each level and charges the elements and bytes it
// builds. Exceeding a limit is one diagnostic naming it, never a crash.
//
// Files: parse.go turns yaml.v3 nodes (JSON is YAML) into a tree of values with positions;
// the scans run before that are budget's (YAMLTooBig, BracketDepth); stack.go reads the sections;
// params.go binds parameters; conditions.go decides conditions; eval.go and intrinsics.go
// evaluate expressions; deps.go finds dependencies and cycles; policy.go is how the engine runs the two
// dialects' stacks.
//
// It imports the template model, the budget and the diag and value leaves, nothing else of
// ours.
package cfn
