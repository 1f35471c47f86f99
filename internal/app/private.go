package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/function"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/httpfunc"
	"github.com/cairn-dev/cairn/internal/provider/tfplugin"
	"github.com/cairn-dev/cairn/internal/registry"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/tenant"
)

// privateProviders resolves huawei.com/private-provider/NAME requirements as RFS does: the
// tenant's registry gives the exact version's function URN, the function its URL, and every
// tfplugin5 call goes there as POST /provider.
type privateProviders struct {
	reg *registry.Service
	fns *function.Manager
}

// resolve answers the requirements that name private providers and returns the others.
func (pp privateProviders) resolve(ctx context.Context, reqs []*template.ProviderRequirement, log *slog.Logger) (map[string]engine.Plugin, []*template.ProviderRequirement, diag.Diagnostics) {
	out := map[string]engine.Plugin{}
	var rest []*template.ProviderRequirement
	var diags diag.Diagnostics
	for _, r := range reqs {
		name, ok := registry.ParseSource(r.Source)
		if !ok {
			rest = append(rest, r)
			continue
		}
		path := "terraform.required_providers." + r.Name
		if pp.reg == nil {
			diags = diags.Append(diag.Errorf(r.Range, path, "private provider %s: this cairn has no private-provider registry", r.Source))
			continue
		}
		res, err := pp.reg.Resolve(ctx, tenant.From(ctx), name, r.Versions)
		if err != nil {
			diags = diags.Append(diag.Errorf(r.Range, path, "%s", err))
			continue
		}
		fn, err := pp.fns.Resolve(ctx, res.FunctionURN)
		if err != nil {
			var unknown *function.UnknownError
			if errors.As(err, &unknown) || errors.Is(err, function.ErrNotFound) {
				err = fmt.Errorf("private provider %s %s points at function %s, which is not registered: %w", res.Source, res.Version, res.FunctionURN, err)
			}
			diags = diags.Append(diag.Errorf(r.Range, path, "%s", err))
			continue
		}
		if fn.Kind != function.KindURL {
			diags = diags.Append(diag.Errorf(r.Range, path,
				"private provider %s %s: function %s is a %s function; a private provider needs an HTTP function (cairn function create NAME --url URL, e.g. of `cairn provider serve`)",
				res.Source, res.Version, fn.Name, fn.Kind))
			continue
		}
		out[r.Source] = privatePlugin{version: res.Version, url: fn.URL, timeout: fn.Timeout, log: log}
	}
	return out, rest, diags
}

// privatePlugin is a private provider version: its HTTP function.
type privatePlugin struct {
	version, url string
	timeout      time.Duration
	log          *slog.Logger
}

func (p privatePlugin) Version() string { return p.version }

// Open returns a provider whose calls travel through the function; each instance is one
// RFS session (one session id, the configuration sent with every call).
func (p privatePlugin) Open(name string) provider.Provider {
	conn := httpfunc.NewConn(p.url, httpfunc.Options{Timeout: p.timeout})
	return tfplugin.NewV5(conn, tfplugin.Options{Name: name, Logger: p.log})
}
