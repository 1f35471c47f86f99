package provider

import (
	"context"

	"github.com/zclconf/go-cty/cty/function"
)

// FunctionProvider is a provider that offers functions to the configuration (Terraform's
// provider-defined functions, `provider::time::rfc3339_parse`).
type FunctionProvider interface {
	// Functions returns the provider's functions by bare name; none when it has none. They
	// need no configuration.
	Functions(ctx context.Context) (map[string]function.Function, error)
}
