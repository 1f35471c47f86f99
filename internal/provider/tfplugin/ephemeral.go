package tfplugin

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
	tf5 "github.com/cairn-dev/cairn/internal/tfplugin5"
	tf6 "github.com/cairn-dev/cairn/internal/tfplugin6"
)

// Ephemeral resources (protocol 5.7 and 6.7): ValidateEphemeralResourceConfig,
// OpenEphemeralResource, RenewEphemeralResource and CloseEphemeralResource. They are kept out
// of protocolClient, which every fake implements: conn5 and conn6 implement ephemeralClient.
type ephemeralClient interface {
	validateEphemeral(ctx context.Context, typ string, config []byte) (diag.Diagnostics, error)
	openEphemeral(ctx context.Context, typ string, config []byte) (openResult, error)
	renewEphemeral(ctx context.Context, typ string, private []byte) (renewResult, error)
	closeEphemeral(ctx context.Context, typ string, private []byte) (diag.Diagnostics, error)
}

type openResult struct {
	result  dynValue
	private []byte
	renewAt time.Time
	diags   diag.Diagnostics
}

type renewResult struct {
	private []byte
	renewAt time.Time
	diags   diag.Diagnostics
}

// addEphemeral reads the ephemeral_resource_schemas of GetProviderSchema.
func addEphemeral[S any](s *schemas, in map[string]S, conv func(S) (*schema, error)) error {
	s.ephemeral = make(map[string]*schema, len(in))
	for name, x := range in {
		sc, err := conv(x)
		if err != nil {
			return fmt.Errorf("ephemeral resource type %s: %w", name, err)
		}
		s.ephemeral[name] = sc
	}
	return nil
}

func renewTime(t *timestamppb.Timestamp) time.Time {
	if t == nil || (t.Seconds == 0 && t.Nanos == 0) {
		return time.Time{}
	}
	return t.AsTime()
}

// ephemeral is the provider's ephemeral-resource client and the schema of typ.
func (p *Provider) ephemeral(ctx context.Context, typ string) (ephemeralClient, *schema, error) {
	s, err := p.ready(ctx)
	if err != nil {
		return nil, nil, err
	}
	sc, err := s.lookup(p.name, provider.SchemaEphemeral, typ)
	if err != nil {
		return nil, nil, err
	}
	ec, ok := p.proto.(ephemeralClient)
	if !ok {
		return nil, nil, fmt.Errorf("provider %s: its protocol client has no ephemeral resources", p.name)
	}
	return ec, sc, nil
}

// ValidateEphemeral implements provider.EphemeralProvider.
func (p *Provider) ValidateEphemeral(ctx context.Context, req provider.EphemeralRequest) (diag.Diagnostics, error) {
	ec, sc, err := p.ephemeral(ctx, req.Type)
	if err != nil {
		return nil, err
	}
	cfg, ds := configValue(sc, unmark(req.Config), "the configuration of ephemeral resource "+req.Type)
	if ds.HasErrors() {
		return ds, nil
	}
	enc, err := encode(cfg, sc.ty)
	if err != nil {
		return nil, err
	}
	err = p.call(ctx, "ValidateEphemeralResourceConfig", func(ctx context.Context) (err error) {
		ds, err = ec.validateEphemeral(ctx, req.Type, enc)
		return err
	})
	return ds, err
}

// OpenEphemeral implements provider.EphemeralProvider: ValidateEphemeralResourceConfig, then
// OpenEphemeralResource, as terraform calls them.
func (p *Provider) OpenEphemeral(ctx context.Context, req provider.EphemeralRequest) (provider.OpenEphemeralResponse, error) {
	ds, err := p.ValidateEphemeral(ctx, req)
	if err != nil || ds.HasErrors() {
		return provider.OpenEphemeralResponse{Diagnostics: ds}, err
	}
	ec, sc, err := p.ephemeral(ctx, req.Type)
	if err != nil {
		return provider.OpenEphemeralResponse{}, err
	}
	cfg, _ := configValue(sc, unmark(req.Config), "")
	enc, err := encode(cfg, sc.ty)
	if err != nil {
		return provider.OpenEphemeralResponse{}, err
	}
	var res openResult
	if err := p.call(ctx, "OpenEphemeralResource", func(ctx context.Context) (err error) {
		res, err = ec.openEphemeral(ctx, req.Type, enc)
		return err
	}); err != nil {
		return provider.OpenEphemeralResponse{}, err
	}
	out := provider.OpenEphemeralResponse{Private: res.private, RenewAt: res.renewAt, Diagnostics: ds.Append(res.diags)}
	if out.Diagnostics.HasErrors() {
		return out, nil
	}
	v, err := decode(res.result, sc.ty)
	if err != nil {
		return provider.OpenEphemeralResponse{}, fmt.Errorf("provider %s: OpenEphemeralResource %s: %w", p.name, req.Type, err)
	}
	// Unlike a resource's, the value is not marked by the schema's sensitive attributes:
	// terraform marks an ephemeral result ephemeral only (ephemeralasnull(x.result) == null
	// is a plain bool there).
	out.Result = v
	return out, nil
}

// RenewEphemeral implements provider.EphemeralProvider.
func (p *Provider) RenewEphemeral(ctx context.Context, req provider.RenewEphemeralRequest) (provider.RenewEphemeralResponse, error) {
	ec, _, err := p.ephemeral(ctx, req.Type)
	if err != nil {
		return provider.RenewEphemeralResponse{}, err
	}
	var res renewResult
	err = p.call(ctx, "RenewEphemeralResource", func(ctx context.Context) (err error) {
		res, err = ec.renewEphemeral(ctx, req.Type, req.Private)
		return err
	})
	return provider.RenewEphemeralResponse{Private: res.private, RenewAt: res.renewAt, Diagnostics: res.diags}, err
}

// CloseEphemeral implements provider.EphemeralProvider.
func (p *Provider) CloseEphemeral(ctx context.Context, req provider.RenewEphemeralRequest) (diag.Diagnostics, error) {
	ec, _, err := p.ephemeral(ctx, req.Type)
	if err != nil {
		return nil, err
	}
	var ds diag.Diagnostics
	err = p.call(ctx, "CloseEphemeralResource", func(ctx context.Context) (err error) {
		ds, err = ec.closeEphemeral(ctx, req.Type, req.Private)
		return err
	})
	return ds, err
}

func (c *conn5) validateEphemeral(ctx context.Context, typ string, config []byte) (diag.Diagnostics, error) {
	r, err := c.c.ValidateEphemeralResourceConfig(ctx, &tf5.ValidateEphemeralResourceConfig_Request{TypeName: typ, Config: dv5(config)}, callOpts...)
	if err != nil {
		return nil, err
	}
	return diags5(r.Diagnostics), nil
}

func (c *conn5) openEphemeral(ctx context.Context, typ string, config []byte) (openResult, error) {
	r, err := c.c.OpenEphemeralResource(ctx, &tf5.OpenEphemeralResource_Request{TypeName: typ, Config: dv5(config),
		ClientCapabilities: clientCaps5()}, callOpts...)
	if err != nil {
		return openResult{}, err
	}
	return openResult{result: fromDV5(r.Result), private: r.Private, renewAt: renewTime(r.RenewAt), diags: diags5(r.Diagnostics)}, nil
}

func (c *conn5) renewEphemeral(ctx context.Context, typ string, private []byte) (renewResult, error) {
	r, err := c.c.RenewEphemeralResource(ctx, &tf5.RenewEphemeralResource_Request{TypeName: typ, Private: private}, callOpts...)
	if err != nil {
		return renewResult{}, err
	}
	return renewResult{private: r.Private, renewAt: renewTime(r.RenewAt), diags: diags5(r.Diagnostics)}, nil
}

func (c *conn5) closeEphemeral(ctx context.Context, typ string, private []byte) (diag.Diagnostics, error) {
	r, err := c.c.CloseEphemeralResource(ctx, &tf5.CloseEphemeralResource_Request{TypeName: typ, Private: private}, callOpts...)
	if err != nil {
		return nil, err
	}
	return diags5(r.Diagnostics), nil
}

func (c *conn6) validateEphemeral(ctx context.Context, typ string, config []byte) (diag.Diagnostics, error) {
	r, err := c.c.ValidateEphemeralResourceConfig(ctx, &tf6.ValidateEphemeralResourceConfig_Request{TypeName: typ, Config: dv6(config)}, callOpts...)
	if err != nil {
		return nil, err
	}
	return diags6(r.Diagnostics), nil
}

func (c *conn6) openEphemeral(ctx context.Context, typ string, config []byte) (openResult, error) {
	r, err := c.c.OpenEphemeralResource(ctx, &tf6.OpenEphemeralResource_Request{TypeName: typ, Config: dv6(config),
		ClientCapabilities: clientCaps6()}, callOpts...)
	if err != nil {
		return openResult{}, err
	}
	return openResult{result: fromDV6(r.Result), private: r.Private, renewAt: renewTime(r.RenewAt), diags: diags6(r.Diagnostics)}, nil
}

func (c *conn6) renewEphemeral(ctx context.Context, typ string, private []byte) (renewResult, error) {
	r, err := c.c.RenewEphemeralResource(ctx, &tf6.RenewEphemeralResource_Request{TypeName: typ, Private: private}, callOpts...)
	if err != nil {
		return renewResult{}, err
	}
	return renewResult{private: r.Private, renewAt: renewTime(r.RenewAt), diags: diags6(r.Diagnostics)}, nil
}

func (c *conn6) closeEphemeral(ctx context.Context, typ string, private []byte) (diag.Diagnostics, error) {
	r, err := c.c.CloseEphemeralResource(ctx, &tf6.CloseEphemeralResource_Request{TypeName: typ, Private: private}, callOpts...)
	if err != nil {
		return nil, err
	}
	return diags6(r.Diagnostics), nil
}

var _ provider.EphemeralProvider = (*Provider)(nil)
