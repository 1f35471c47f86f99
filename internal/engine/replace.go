package engine

import (
	"context"
	"fmt"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// replace replaces a Terraform resource whose plan requires it (or a tainted one, whose create
// failed after making an object). By default the old object is destroyed first and the new
// one created; with create_before_destroy the new one comes first and the old copy goes in the
// cleanup phase.
func (r *run) replace(ctx context.Context, sc *scope, p provider.Provider, res *template.Resource, prior state.Resource, props cty.Value) error {
	if res.CreateBeforeDestroy {
		oldProps, err := value.Unmarshal(prior.Props)
		if err != nil {
			return fmt.Errorf("cannot decode properties of %s: %w", res.Name, err)
		}
		return r.update(ctx, sc, p, res, prior, oldProps, props, true)
	}
	if err := r.deleteOne(ctx, "replace/"+res.Name, targetOf(prior)); err != nil {
		return err
	}
	return r.create(ctx, sc, p, res, props)
}
