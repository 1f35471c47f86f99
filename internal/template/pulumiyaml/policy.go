package pulumiyaml

import "github.com/cairn-dev/cairn/internal/template"

// Policy is how the engine runs Pulumi YAML stacks (docs/design/004-pulumi-plan.md): a failure
// stops where it is and keeps what was done, the engine replaces (create first unless
// deleteBeforeReplace), plugins are resolved from type tokens, and every deploy binds its
// config anew (Pulumi reads the stack file each time).
func Policy() template.DialectPolicy {
	return template.DialectPolicy{
		Dialect: template.PulumiYAML, Name: "Pulumi YAML", StackType: "pulumi:pulumi:Stack",
		FromFiles: true, PlansReplacements: true, ProviderPlugins: true,
		// SkipsUnchanged: what Pulumi's semantics allow is argued in docs/design/004-pulumi-plan.md.
		Importable: true, StateFiles: true, ShowsAttributes: true, SkipsUnchanged: true,
		Paths: paths,
		// Pulumi has no stack ARN; the id is the fresh unique id, as for ROS.
		StackID: func(_, _, _, unique string) string { return unique },
	}
}

func paths(r *template.Resource) template.ResourcePaths {
	at := "resources." + r.Name
	return template.ResourcePaths{Resource: at, Type: at + ".type", Properties: at + ".properties"}
}
