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
// Files: parse.go turns yaml.v3 nodes (JSON is YAML) into a tree of values with positions;
// stack.go reads the sections; params.go binds parameters; conditions.go decides conditions;
// eval.go and intrinsics.go evaluate expressions; deps.go finds dependencies and cycles.
//
// It imports the template model and the diag and value leaves, nothing else of ours.
package cfn
