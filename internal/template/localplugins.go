package template

import "context"

type localPluginsKey struct{}

// WithLocalPlugins returns ctx carrying the project's own plugins by requirement source, for
// what resolves plugins while the template is still being parsed (a package's schema).
func WithLocalPlugins(ctx context.Context, bySource map[string][]LocalPlugin) context.Context {
	if len(bySource) == 0 {
		return ctx
	}
	return context.WithValue(ctx, localPluginsKey{}, bySource)
}

// LocalPluginsOf returns the project's own plugins of source that ctx carries.
func LocalPluginsOf(ctx context.Context, source string) []LocalPlugin {
	m, _ := ctx.Value(localPluginsKey{}).(map[string][]LocalPlugin)
	return m[source]
}
