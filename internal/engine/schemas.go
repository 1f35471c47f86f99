package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairn-dev/cairn/internal/template"
)

// SchemaPlugin is a Plugin whose package schema a front end reads to resolve names before
// the stack is bound (Pulumi YAML's type tokens against the Pulumi package schema).
type SchemaPlugin interface {
	Plugin
	PackageSchema(ctx context.Context) ([]byte, error)
}

// packageSchema returns the package schema of the plugin serving requirement source at
// versions ("" for any), as the run would resolve it.
func (e *Engine) packageSchema(ctx context.Context, source, versions string) ([]byte, error) {
	if e.o.Plugins == nil {
		return nil, errors.New("this cairn was started without provider plugin support")
	}
	req := &template.ProviderRequirement{Name: source, Source: source, Versions: versions, Local: template.LocalPluginsOf(ctx, source)}
	pkgs, _, diags := e.o.Plugins.Resolve(ctx, []*template.ProviderRequirement{req}, nil, false)
	if diags.HasErrors() {
		return nil, errors.New(reasonOf(diags.Err()))
	}
	sp, ok := pkgs[source].(SchemaPlugin)
	if !ok {
		return nil, fmt.Errorf("the plugin of %s has no package schema", source)
	}
	return sp.PackageSchema(ctx)
}
