// Package pulumiyaml is the Pulumi YAML front end: it reads a Pulumi project (Pulumi.yaml,
// the program inline or in Main.yaml, config from Pulumi.<stack>.yaml) into a
// *template.Stack with the Pulumi YAML DialectPolicy.
//
// YAML is decoded by pulumi-yaml's own syntax/encoding package, so syntax and positions are
// Pulumi's; the declarations, the ${...} expression language and the fn:: built-ins are
// cairn's, on cty values (pulumi-yaml's ast and evaluator pull in Pulumi's plugin host).
// Config, variables and resources share one namespace: config values are bound at parse
// time, variables are evaluated where used, and a resource reads as its outputs (`id` is its
// physical id). Anything of the language not handled yet is refused or warned about by
// name, never ignored silently.
package pulumiyaml
