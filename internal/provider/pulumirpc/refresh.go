package pulumirpc

import (
	"context"

	"github.com/cairn-dev/cairn/internal/provider"
)

// refreshDiff makes the Diff Pulumi's engine makes after the Read of a stored resource (a
// refresh): what was read is the old side, the inputs stored before the read the new one,
// so that the refresh can show what changed outside. The answer only shows: nothing is
// planned from it; the read's inputs and outputs are what the stack stores, and what the
// next deploy diffs against. A Read that imports (no stored inputs) or finds nothing has no
// such Diff.
func (p *Provider) refreshDiff(ctx context.Context, req provider.ReadRequest, resp provider.ReadResponse) (provider.ReadResponse, error) {
	if resp.ID == "" || isNull(req.Props) || isNull(req.Outputs) || p.isOwn(req.Resource.Type) {
		return resp, nil
	}
	d, err := p.Diff(ctx, provider.DiffRequest{Resource: req.Resource, ID: resp.ID,
		OldProps: resp.Props, OldOutputs: resp.Outputs, NewProps: req.Props, Private: resp.Private})
	if err != nil {
		return resp, err
	}
	resp.Diagnostics = append(resp.Diagnostics, d.Diagnostics...)
	return resp, nil
}
