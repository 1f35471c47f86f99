package tfplugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	"google.golang.org/grpc"

	"github.com/cairn-dev/cairn/internal/provider"
	tf6 "github.com/cairn-dev/cairn/internal/tfplugin6"
)

// Config names a provider plugin to run.
type Config struct {
	Name       string // local name, e.g. "time", for messages
	Executable string
	Logger     *slog.Logger
}

// Provider is one provider instance (one process, one configuration). The process starts on
// the first call; schemas are read once. It is safe for concurrent use.
type Provider struct {
	cfg Config

	startOnce sync.Once
	proc      *process
	conn      *conn
	schemas   *schemas
	startErr  error

	stopOnce sync.Once
}

var _ provider.Provider = (*Provider)(nil)

// New returns a provider instance that launches cfg.Executable when first used.
func New(cfg Config) *Provider { return &Provider{cfg: cfg} }

// NewFromConn returns a provider instance over an established connection speaking protocol
// version 5 or 6 (the HTTP-function transport of a later issue).
func NewFromConn(name string, cc grpc.ClientConnInterface, version int) *Provider {
	p := &Provider{cfg: Config{Name: name}, conn: &conn{cc: cc, version: version}}
	p.startOnce.Do(func() {})
	return p
}

func (p *Provider) start(ctx context.Context) error {
	p.startOnce.Do(func() {
		p.proc, p.startErr = launch(p.cfg.Name, p.cfg.Executable, p.cfg.Logger)
		if p.startErr == nil {
			p.conn = p.proc.conn
		}
	})
	if p.startErr != nil {
		return p.startErr
	}
	if p.schemas == nil {
		return p.loadSchemas(ctx)
	}
	return nil
}

var schemaMu sync.Mutex

func (p *Provider) loadSchemas(ctx context.Context) error {
	schemaMu.Lock()
	defer schemaMu.Unlock()
	if p.schemas != nil {
		return nil
	}
	s, err := p.conn.schema(ctx)
	if err != nil {
		return p.callErr(err)
	}
	if ds := diagnostics(s.diagnostics); ds.HasErrors() {
		return fmt.Errorf("provider %s: cannot read its schema: %s", p.cfg.Name, ds.Err())
	}
	p.schemas = s
	return nil
}

// callErr describes a failed RPC, with the provider's last stderr lines when it crashed.
func (p *Provider) callErr(err error) error {
	if err == nil {
		return nil
	}
	msg := fmt.Sprintf("provider %s: %s", p.cfg.Name, err)
	if p.proc != nil && p.proc.client.Exited() {
		msg = fmt.Sprintf("provider %s: the plugin exited: %s%s", p.cfg.Name, err, p.proc.stderr.suffix())
	}
	return errors.New(msg)
}

// call runs one RPC; when ctx ends first, the provider is told to stop (once) and the call's
// context error is returned.
func (p *Provider) call(ctx context.Context, method string, req, resp any) error {
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			p.stop()
		case <-done:
		}
	}()
	err := p.conn.invoke(ctx, method, req, resp)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return p.callErr(err)
}

// stop asks the provider to stop every call in flight, as terraform does on Ctrl-C.
func (p *Provider) stop() {
	p.stopOnce.Do(func() {
		sctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		_ = p.conn.invoke(sctx, "Stop", new(tf6.StopProvider_Request), new(tf6.StopProvider_Response))
	})
}

func (p *Provider) resourceSchema(kind provider.SchemaKind, typ string) (*schema, error) {
	var m map[string]*schema
	switch kind {
	case provider.SchemaProvider:
		return p.schemas.provider, nil
	case provider.SchemaData:
		m = p.schemas.data
	default:
		m = p.schemas.resources
	}
	if s, ok := m[typ]; ok {
		return s, nil
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	what := "resource type"
	if kind == provider.SchemaData {
		what = "data source"
	}
	return nil, fmt.Errorf("provider %s does not support %s %q; it serves: %s", p.cfg.Name, what, typ, strings.Join(names, ", "))
}

// Capabilities implements provider.Provider.
func (p *Provider) Capabilities() provider.Capabilities { return provider.Capabilities{Read: true} }

// Schema implements provider.Provider.
func (p *Provider) Schema(ctx context.Context, req provider.SchemaRequest) (provider.Schema, error) {
	if err := p.start(ctx); err != nil {
		return provider.Schema{}, err
	}
	s, err := p.resourceSchema(req.Kind, req.Type)
	if err != nil {
		return provider.Schema{}, err
	}
	return provider.Schema{Spec: s.spec, ImpliedType: s.ty}, nil
}

// Check validates a resource's configuration: attributes the provider computes cannot be
// set, then the provider's own ValidateResourceConfig.
func (p *Provider) Check(ctx context.Context, req provider.CheckRequest) (provider.CheckResponse, error) {
	if err := p.start(ctx); err != nil {
		return provider.CheckResponse{}, err
	}
	s, err := p.resourceSchema(provider.SchemaResource, req.Resource.Type)
	if err != nil {
		return provider.CheckResponse{}, err
	}
	var resp provider.CheckResponse
	if req.Props != cty.NilVal && req.Props.IsKnown() && !req.Props.IsNull() && req.Props.Type().IsObjectType() {
		for name, a := range s.block.attrs {
			if a.computed && !a.optional && !a.required && req.Props.Type().HasAttribute(name) && !req.Props.GetAttr(name).IsNull() {
				resp.Failures = append(resp.Failures, provider.CheckFailure{Property: name,
					Reason: fmt.Sprintf("Invalid Configuration for Read-Only Attribute: cannot set value for this attribute as the provider has marked it as read-only. Remove the configuration line setting the value.")})
			}
		}
	}
	cfg, err := encode(req.Props, s.ty)
	if err != nil {
		return provider.CheckResponse{}, err
	}
	out := new(tf6.ValidateResourceConfig_Response)
	if err := p.call(ctx, "ValidateResource", &tf6.ValidateResourceConfig_Request{TypeName: req.Resource.Type, Config: cfg}, out); err != nil {
		return provider.CheckResponse{}, err
	}
	for _, d := range out.Diagnostics {
		f := provider.CheckFailure{Property: pathString(d.Attribute), Reason: reason(d)}
		if d.Severity == tf6.Diagnostic_WARNING {
			resp.Warnings = append(resp.Warnings, f)
		} else {
			resp.Failures = append(resp.Failures, f)
		}
	}
	return resp, nil
}

// Configure implements provider.Provider.
func (p *Provider) Configure(ctx context.Context, req provider.ConfigureRequest) (provider.ConfigureResponse, error) {
	if err := p.start(ctx); err != nil {
		return provider.ConfigureResponse{}, err
	}
	ty := p.schemas.provider.ty
	cfg := req.Config
	if cfg == cty.NilVal || cfg.IsNull() || cfg.Type().Equals(cty.EmptyObject) {
		cfg = emptyOf(ty)
	}
	dv, err := encode(cfg, ty)
	if err != nil {
		return provider.ConfigureResponse{}, err
	}
	vresp := new(tf6.ValidateProviderConfig_Response)
	if err := p.call(ctx, "ValidateProvider", &tf6.ValidateProviderConfig_Request{Config: dv}, vresp); err != nil {
		return provider.ConfigureResponse{}, err
	}
	ds := diagnostics(vresp.Diagnostics)
	if ds.HasErrors() {
		return provider.ConfigureResponse{Diagnostics: ds}, nil
	}
	cresp := new(tf6.ConfigureProvider_Response)
	err = p.call(ctx, "Configure", &tf6.ConfigureProvider_Request{TerraformVersion: TerraformVersion, Config: dv,
		ClientCapabilities: &tf6.ClientCapabilities{}}, cresp)
	if err != nil {
		return provider.ConfigureResponse{}, err
	}
	return provider.ConfigureResponse{Diagnostics: ds.Append(diagnostics(cresp.Diagnostics))}, nil
}

// emptyOf is an object of type ty with every attribute null: an absent provider block.
func emptyOf(ty cty.Type) cty.Value {
	if !ty.IsObjectType() {
		return cty.NullVal(ty)
	}
	attrs := map[string]cty.Value{}
	for name, at := range ty.AttributeTypes() {
		if at.IsListType() {
			attrs[name] = cty.ListValEmpty(at.ElementType())
		} else if at.IsSetType() {
			attrs[name] = cty.SetValEmpty(at.ElementType())
		} else if at.IsMapType() {
			attrs[name] = cty.MapValEmpty(at.ElementType())
		} else {
			attrs[name] = cty.NullVal(at)
		}
	}
	return cty.ObjectVal(attrs)
}

// TerraformVersion is what cairn tells providers it is, for the ones that check.
const TerraformVersion = "1.11.4"

// Close stops the plugin process.
func (p *Provider) Close() error {
	if p.proc != nil {
		p.proc.client.Kill()
	}
	return nil
}

// privateData is what cairn stores as a resource's private data: the provider's own bytes
// and the schema version its state was written with, so the state is upgraded when the
// provider's schema moves on.
type privateData struct {
	Version int64  `json:"v"`
	Private []byte `json:"p,omitempty"`
}

func wrapPrivate(version int64, b []byte) []byte {
	out, _ := json.Marshal(privateData{Version: version, Private: b})
	return out
}

func unwrapPrivate(b []byte) (privateData, bool) {
	var pd privateData
	if len(b) == 0 || json.Unmarshal(b, &pd) != nil {
		return privateData{}, false
	}
	return pd, true
}

// priorState is a stored state as the provider's current schema reads it: upgraded with
// UpgradeResourceState when it was written by an older schema version (or its version is not
// known), as terraform does every time it loads state.
func (p *Provider) priorState(ctx context.Context, typ string, s *schema, state cty.Value, private []byte) (cty.Value, []byte, error) {
	if state == cty.NilVal || state.IsNull() {
		return cty.NullVal(s.ty), nil, nil
	}
	pd, ok := unwrapPrivate(private)
	if ok && pd.Version == s.version {
		v, err := convert(unmark(state), s.ty)
		return v, pd.Private, err
	}
	raw, err := ctyjson.Marshal(unmark(state), state.Type())
	if err != nil {
		return cty.NilVal, nil, fmt.Errorf("cannot encode the stored state of %s: %w", typ, err)
	}
	resp := new(tf6.UpgradeResourceState_Response)
	if err := p.call(ctx, "UpgradeResourceState", &tf6.UpgradeResourceState_Request{TypeName: typ, Version: pd.Version,
		RawState: &tf6.RawState{Json: raw}}, resp); err != nil {
		return cty.NilVal, nil, err
	}
	if ds := diagnostics(resp.Diagnostics); ds.HasErrors() {
		return cty.NilVal, nil, ds.Err()
	}
	v, err := decode(resp.UpgradedState, s.ty)
	return v, pd.Private, err
}
