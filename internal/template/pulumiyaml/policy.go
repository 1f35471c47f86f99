package pulumiyaml

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/pulumistate"
	"github.com/cairn-dev/cairn/internal/pulumiurn"
	"github.com/cairn-dev/cairn/internal/template"
)

// Policy is how the engine runs Pulumi YAML stacks (docs/design/004-pulumi-plan.md): a failure
// stops where it is and keeps what was done, the engine replaces (create first unless
// deleteBeforeReplace), plugins are resolved from type tokens, and every deploy binds its
// config anew (Pulumi reads the stack file each time).
func Policy() template.DialectPolicy {
	return template.DialectPolicy{
		Dialect: template.PulumiYAML, Name: "Pulumi YAML", StackType: "pulumi:pulumi:Stack",
		FromFiles: true, PlansReplacements: true, UpdatesFailedCreates: true, ProviderPlugins: true, RechecksReplacements: true,
		RefreshKeepsOutputs: true, ChecksInRun: true,
		// Create has no idempotency token: a create in flight at a crash is made again, and
		// the object the first one may have made is reported (Pulumi's pending operation).
		BlindResumedCreates: true, Importable: true, ShowsAttributes: true, StateFormat: pulumistate.Format{},
		Protection: &template.Protection{Refusal: protectRefusal},
		Paths:      paths,
		// Pulumi has no stack ARN; the id is the fresh unique id, as for ROS.
		StackID: func(_, _, _, unique string) string { return unique },
	}
}

// protectRefusal words a refusal as Pulumi's engine does (the resource's name where Pulumi
// gives its URN, cairn's verb where it gives its own).
func protectRefusal(name string, replace bool) string {
	if replace {
		return fmt.Sprintf("unable to replace resource %q as it is currently marked for protection. "+
			"To unprotect the resource, remove the `protect` flag from the resource in your Pulumi program and run `cairn deploy`", name)
	}
	return fmt.Sprintf("resource %q cannot be deleted because it is protected. "+
		"To unprotect the resource, remove the `protect` flag from the resource in your Pulumi program and run `cairn deploy` "+
		"(a resource no longer in the program: declare it again with `protect: false`, deploy, then remove it)", name)
}

func paths(r *template.Resource) template.ResourcePaths {
	at := "resources." + r.Name
	return template.ResourcePaths{Resource: at, Type: at + ".type", Properties: at + ".properties"}
}

// stateFormat is the deployment format of st, a stack of project: default providers are
// named by their package and pinned version as Pulumi names them.
func stateFormat(project string, st *template.Stack) pulumistate.Format {
	return pulumistate.Format{Project: project, ProviderResource: ProviderResource, DefaultProvider: func(addr string) (string, string, bool) {
		pkg, _, ok := DefaultProviderOf(addr) // downloadurl.go
		if !ok {
			return "", "", false
		}
		version := ""
		if r := st.Requirement(pkg); r != nil {
			version = r.Versions
			if pz, ok := ParameterizationOf(r.Source); ok {
				version = pz.Version // named by the package's version, not its plugin's
			}
		}
		return pkg, version, true
	}, DefaultInternal: func(addr string) map[string]any {
		pkg, url, ok := DefaultProviderOf(addr)
		if !ok {
			return nil
		}
		internal := map[string]any{}
		if url != "" {
			internal[pluginDownloadKey] = url // providers.SetProviderURL
		}
		if r := st.Requirement(pkg); r != nil {
			if pz, ok := ParameterizationOf(r.Source); ok {
				// providers.SetProviderParameterization: the base plugin and its version
				internal["name"], internal["version"] = pz.Plugin, r.Versions
				internal["parameterization"] = base64.StdEncoding.EncodeToString(pz.Value)
			}
		}
		return internal
	}, DefaultConfig: func(addr string) cty.Value {
		if cfg := st.Provider(addr); cfg != nil {
			if v, ds := cfg.Config.Eval(nil); !ds.HasErrors() && v != cty.NilVal && v.IsWhollyKnown() {
				return v
			}
		}
		return cty.NilVal
	}}
}

// urnOf names resources and provider configurations of st (project's stack) by their Pulumi
// URNs, for the plugins' calls (template.DialectPolicy.URN): a resource's type chain holds its
// parents' types; a default provider is named as the export names it (default_<version>).
func urnOf(project, stack string, st *template.Stack) func(name, typ string) string {
	format := stateFormat(project, st)
	return func(name, typ string) string {
		if rest, ok := strings.CutPrefix(name, "pulumi:providers:"); ok && typ == "" {
			pkg, pname, _ := strings.Cut(rest, "::")
			typ = "pulumi:providers:" + pkg
			if _, url, ok := DefaultProviderOf(name); ok {
				_, version, _ := format.DefaultProvider(name)
				return pulumiurn.New(stack, project, typ, pulumistate.DefaultProviderName(version, url))
			}
			name = pname
		}
		return pulumiurn.New(stack, project, pulumiurn.Chain(typ, pulumistate.ParentTypes(st, name)...), name)
	}
}
