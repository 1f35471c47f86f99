package engine

import (
	"context"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/template/pulumiyaml"
	"github.com/cairn-dev/cairn/internal/template/tflang"
)

// dirFrontEnd is a dialect whose template is a directory of files (api.DeployRequest.Files):
// parse asks each in turn whether it recognises the files; the first that does parses them.
type dirFrontEnd struct {
	detect func(files map[string]string) bool
	parse  func(ctx context.Context, e *Engine, stackName string, src source, validate bool) (*template.Stack, diag.Diagnostics)
}

// dirFrontEnds: the Terraform language first, so that a configuration that also holds a
// Pulumi.yaml stays what it was.
var dirFrontEnds = []dirFrontEnd{
	{
		detect: func(files map[string]string) bool { return tflang.Detect(bytesOf(files), "") },
		parse: func(ctx context.Context, e *Engine, _ string, src source, validate bool) (*template.Stack, diag.Diagnostics) {
			return tflang.Parse(ctx, bytesOf(src.files), tflang.Options{Vars: src.params, VarFiles: src.varFiles, Env: src.env,
				Validate: validate, AbsDir: src.workDir, ClientHome: e.o.ClientDirs})
		},
	},
	{
		detect: pulumiyaml.Detect,
		parse: func(ctx context.Context, e *Engine, stackName string, src source, _ bool) (*template.Stack, diag.Diagnostics) {
			schema := func(ctx context.Context, source, version string) ([]byte, error) {
				return e.packageSchema(ctx, source, version) // schemas.go
			}
			return pulumiyaml.ParseWith(pulumiyaml.WithRootDirectory(ctx, src.workDir), src.files, stackName, src.params, pulumiyaml.Options{Schema: schema,
				LocalPlugins: e.clientRunsHere(ctx, src.workDir)}) // providers.go
		},
	},
}

func bytesOf(files map[string]string) map[string][]byte {
	out := make(map[string][]byte, len(files))
	for name, text := range files {
		out[name] = []byte(text)
	}
	return out
}
