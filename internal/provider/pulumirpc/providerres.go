package pulumirpc

import (
	"context"
	"crypto/rand"
	"fmt"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/zclconf/go-cty/cty"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/cairn-dev/cairn/internal/provider"
)

// A provider resource (`pulumi:providers:<pkg>`: an explicit provider of the program, or a
// default provider) is a resource of the plugin it configures. Its lifecycle is Pulumi's:
// Check is CheckConfig, Diff is DiffConfig, Create gives it a fresh UUID (the id resources
// point at, `<provider URN>::<id>`), Update and Delete change nothing in the plugin. Its
// properties are the configuration the engine configures the same plugin instance with.

// ProviderType is the type token of package pkg's provider resources.
func ProviderType(pkg string) string { return "pulumi:providers:" + pkg }

// isOwn says whether typ is the type of this plugin's provider resources.
func (p *Provider) isOwn(typ string) bool { return typ == ProviderType(p.opts.Package) }

// withVersion adds the "version" configuration key Pulumi sends when the program pinned one
// (a parameterized package's own version: Options.Version).
func (p *Provider) withVersion(config cty.Value) cty.Value {
	if config == cty.NilVal || config.IsNull() {
		config = cty.EmptyObjectVal
	}
	if p.opts.Version == "" || !config.Type().IsObjectType() || config.Type().HasAttribute("version") {
		return config
	}
	plain, marks := config.Unmark() // a secret configuration as a whole stays one
	attrs := plain.AsValueMap()
	if attrs == nil {
		attrs = map[string]cty.Value{}
	}
	attrs["version"] = cty.StringVal(p.opts.Version)
	return cty.ObjectVal(attrs).WithMarks(marks)
}

// checkConfig is Check of a provider resource.
func (p *Provider) checkConfig(ctx context.Context, req provider.CheckRequest, olds cty.Value) (provider.CheckResponse, error) {
	var resp provider.CheckResponse
	props := p.withSettings(req.Props)
	news, err := configEncoder(true).toStruct(withoutInternal(props))
	if err != nil {
		return resp, err
	}
	oldInputs, err := configEncoder(true).toStruct(withoutInternal(olds))
	if err != nil {
		return resp, err
	}
	creq := &pulumirpc.CheckRequest{
		Urn: p.resURN(req.Resource), Name: req.Resource.Name, Type: req.Resource.Type,
		Olds: oldInputs, News: news, RandomSeed: seed(),
	}
	r := p.configCheckedAs(creq)
	if r == nil {
		r, err = p.proc.client.CheckConfig(ctx, creq)
	}
	if err != nil {
		if d, ok := providerDiag(err, "CheckConfig"); ok {
			resp.Failures = append(resp.Failures, provider.CheckFailure{Reason: d.Summary})
			return resp, nil
		}
		return resp, p.rpcErr("CheckConfig", err)
	}
	for _, f := range r.GetFailures() {
		resp.Failures = append(resp.Failures, provider.CheckFailure{Property: f.GetProperty(), Reason: f.GetReason()})
	}
	if len(resp.Failures) > 0 {
		return resp, nil
	}
	if r.GetInputs() == nil {
		resp.Props = props
		return resp, nil
	}
	checked, err := fromStruct(r.GetInputs())
	if err != nil {
		return resp, fmt.Errorf("provider %s: CheckConfig reply: %w", p.opts.Package, err)
	}
	resp.Props = withInternalOf(annotateSecrets(checked, props), props)
	return resp, nil
}

// checkConfigMemo is the CheckConfig answer this instance's configuration got.
type checkConfigMemo struct {
	req  *pulumirpc.CheckRequest
	resp *pulumirpc.CheckResponse
}

// configCheckedAs answers a new provider resource's CheckConfig (no olds) from the one that
// configured this instance with the same configuration, once: the plugin then sees one
// CheckConfig, as under pulumi, which checks a provider resource and configures it with the
// answer. nil when the request is another.
func (p *Provider) configCheckedAs(req *pulumirpc.CheckRequest) *pulumirpc.CheckResponse {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.configChecked
	if m == nil || len(req.GetOlds().GetFields()) != 0 || req.GetUrn() != m.req.GetUrn() || !proto.Equal(req.GetNews(), m.req.GetNews()) {
		return nil
	}
	p.configChecked = nil
	return m.resp
}

// diffConfig is Diff of a provider resource. A replacement is remembered: every resource this
// instance serves is then replaced too, as Pulumi replaces the resources of a provider whose
// DiffConfig says so (the provider resource is planned before the resources it serves).
func (p *Provider) diffConfig(ctx context.Context, req provider.DiffRequest) (provider.DiffResponse, error) {
	var resp provider.DiffResponse
	p.comp.setSelf(p.resURN(req.Resource), req.ID)
	olds, oldInputs, news, err := p.enc(true).change(withoutInternal(req.OldOutputs), withoutInternal(req.OldProps), withoutInternal(p.withSettings(req.NewProps)))
	if err != nil {
		return resp, err
	}
	r, err := p.proc.client.DiffConfig(ctx, &pulumirpc.DiffRequest{
		Id: req.ID, Urn: p.resURN(req.Resource), Name: req.Resource.Name, Type: req.Resource.Type,
		Olds: olds, OldInputs: oldInputs, News: news,
	})
	switch {
	case status.Code(err) == codes.Unimplemented:
		resp = inputDiff(req.OldProps, p.withSettings(req.NewProps))
	case err != nil:
		if d, ok := providerDiag(err, "DiffConfig"); ok {
			resp.Diagnostics = append(resp.Diagnostics, d)
			return resp, nil
		}
		return resp, p.rpcErr("DiffConfig", err)
	case r.GetChanges() == pulumirpc.DiffResponse_DIFF_UNKNOWN:
		resp = unknownDiff(r, req.OldProps, p.withSettings(req.NewProps))
	default:
		resp = diffResult(r)
	}
	if resp.Replace {
		p.mu.Lock()
		p.replacedConfig, p.priorConfig = true, req.OldProps
		p.mu.Unlock()
	}
	return resp, nil
}

// PriorConfig is the configuration this instance's provider resource had before DiffConfig
// replaced it in this run, with which its old objects are deleted (provider.ConfigReplacer).
func (p *Provider) PriorConfig() (provider.ConfigureRequest, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.replacedConfig || p.priorConfig == cty.NilVal {
		return provider.ConfigureRequest{}, false
	}
	return provider.ConfigureRequest{Config: p.priorConfig, URN: p.confURN}, true
}

// configReplaced reports whether this instance's provider resource is being replaced.
func (p *Provider) configReplaced() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.replacedConfig
}

// createProvider is Create of a provider resource: a fresh UUID, outputs the checked
// configuration; in a preview the id is not known yet.
func (p *Provider) createProvider(req provider.CreateRequest, preview bool) provider.CreateResponse {
	if preview {
		return provider.CreateResponse{Outputs: withoutInternal(req.Props)}
	}
	id := newUUID()
	p.comp.setSelf(p.resURN(req.Resource), id)
	return provider.CreateResponse{ID: id, Outputs: withoutInternal(req.Props)}
}

// newUUID is a random (version 4) UUID, as Pulumi gives providers.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
