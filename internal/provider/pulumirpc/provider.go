// Package pulumirpc hosts unmodified Pulumi resource-provider plugins (`pulumi-resource-<pkg>`)
// as cairn providers: it launches a plugin the way the Pulumi engine does (engine address as the
// only argument, port read from stdout, Handshake with the pre-Handshake fallback), serves the
// engine side the plugin calls back (Log, health), and speaks the ResourceProvider service over
// Pulumi's own generated stubs, converting property values between Pulumi's wire encoding
// (secrets, unknowns, assets) and cty. It never imports engine or state.
package pulumirpc

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/zclconf/go-cty/cty"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/pulumiurn"
	"github.com/cairn-dev/cairn/internal/value"
)

// Options says which plugin to run and for which project.
type Options struct {
	Package    string // "simple": the plugin serves types "simple:…"
	Executable string // path of pulumi-resource-<pkg>
	Dir        string // the project directory: the plugin's working directory
	Project    string // Pulumi project name, part of every URN (the stack name when empty)
	Stack      string // stack name for the provider's own URN
	// Version is the package version the program asked for; sent as the "version" config key
	// the way Pulumi does (conformance providers refuse a configuration without it).
	Version string
	Log     *slog.Logger
	// StopGrace bounds how long a call may run on after its context ended and the plugin was
	// sent Cancel; 0 means DefaultStopGrace.
	StopGrace time.Duration
	// SchemaCacheDir keeps package schemas across runs (Schema); "" reads them every time.
	SchemaCacheDir string
	// Parameterization, when set, makes the plugin the provider of another package
	// (parameterize.go); Package is then that package's name.
	Parameterization *Parameterization
	// EnvVarMappings are the provider resource's envVarMappings: the plugin sees the
	// variable KEY of its environment under the name VALUE too (envmap.go).
	EnvVarMappings map[string]string
	// GRPCLog is a file that records every call to the plugin, as PULUMI_DEBUG_GRPC's does
	// under pulumi (grpclog.go); "" records nothing.
	GRPCLog string
}

// Provider is one running plugin, configured once: a Pulumi provider instance.
type Provider struct {
	opts    Options
	proc    *process
	version string // what GetPluginInfo reported

	acceptSecrets   bool
	acceptResources bool
	supportsPreview bool
	// acceptByteStrings: the plugin said at Handshake it takes byte-string objects.
	acceptByteStrings bool
	handshook         bool

	mu         sync.Mutex
	configured bool
	// unconfigured is set when Configure was skipped because the configuration held
	// unknowns (a preview): Check then echoes its inputs and nothing else can be asked.
	unconfigured bool
	// replacedConfig: DiffConfig of this instance's provider resource said replace, so every
	// resource it serves is replaced (providerres.go).
	replacedConfig bool
	// priorConfig is the provider resource's stored configuration before that replacement:
	// the old objects are deleted through an instance configured with it (PriorConfig).
	priorConfig cty.Value
	// emptyRefused: configuring with nothing (ready) was refused; Configure is awaited.
	emptyRefused bool
	// confURN is the URN of the provider configuration the engine configured it as.
	confURN string
	// configChecked is the CheckConfig this instance's configuration was answered (providerres.go).
	configChecked *checkConfigMemo

	comp components // component resources served through Construct (component.go)
}

var _ provider.Provider = (*Provider)(nil)

// Launch starts the plugin, handshakes and reads its version. The caller must Close it.
func Launch(ctx context.Context, opts Options) (*Provider, error) {
	if opts.Dir == "" {
		opts.Dir = binDir(opts.Executable)
	}
	proc, err := start(opts, withEnvVarMappings(pluginEnv(opts.Project, ""), opts.EnvVarMappings))
	if err != nil {
		return nil, err
	}
	p := &Provider{opts: opts, proc: proc}
	hs, legacy, err := proc.handshake(ctx, binDir(opts.Executable))
	if err != nil {
		_ = proc.close()
		return nil, fmt.Errorf("provider %s: %w", opts.Package, err)
	}
	if !legacy {
		p.handshook = true
		p.acceptSecrets, p.acceptResources, p.supportsPreview = hs.GetAcceptSecrets(), hs.GetAcceptResources(), true
		p.acceptByteStrings = hs.GetAcceptsByteString()
	}
	ictx, cancel := context.WithTimeout(ctx, handshakeTimeout) // a plugin that hangs here must not hang the run
	defer cancel()
	info, err := proc.client.GetPluginInfo(ictx, &emptypb.Empty{})
	if err != nil && status.Code(err) != codes.Unimplemented {
		_ = proc.close()
		return nil, fmt.Errorf("provider %s: GetPluginInfo: %w", opts.Package, proc.crashed(err))
	}
	p.version = info.GetVersion()
	if opts.Parameterization != nil {
		pctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
		defer cancel()
		if err := p.parameterize(pctx, opts.Parameterization); err != nil {
			_ = proc.close()
			return nil, err
		}
	}
	return p, nil
}

// Version is the plugin's own version (GetPluginInfo), empty if it does not say.
func (p *Provider) Version() string { return p.version }

// Handshook reports whether the plugin answered Handshake (false: built before it existed).
func (p *Provider) Handshook() bool { return p.handshook }

// Close stops the plugin gracefully (Cancel, SIGINT, SIGKILL after a grace period).
func (p *Provider) Close() error { return p.proc.close() }

// Capabilities: Pulumi providers can all Read.
func (p *Provider) Capabilities() provider.Capabilities { return provider.Capabilities{Read: true} }

// PackageSchema returns the plugin's package schema (JSON).
func (p *Provider) PackageSchema(ctx context.Context) ([]byte, error) {
	resp, err := p.proc.client.GetSchema(ctx, p.schemaRequest())
	if err != nil {
		return nil, p.rpcErr("GetSchema", err)
	}
	return []byte(resp.GetSchema()), nil
}

// Schema is not supported: Pulumi schemas describe types for code generators, not HCL blocks;
// use PackageSchema.
func (p *Provider) Schema(context.Context, provider.SchemaRequest) (provider.Schema, error) {
	return provider.Schema{}, provider.ErrNotSupported
}

// providerURN is the URN of the provider configuration this instance has (the engine's,
// ConfigureRequest.URN), or a default provider's of Options' project and stack.
func (p *Provider) providerURN() string {
	if p.confURN != "" {
		return p.confURN
	}
	return p.urn(p.opts.Stack, "pulumi:providers:"+p.opts.Package, "default")
}

// providerName is the provider's own name, the last part of its URN.
func (p *Provider) providerName() string {
	if name, err := pulumiurn.Name(p.providerURN()); err == nil {
		return name
	}
	return "default"
}

func (p *Provider) urn(stack, typ, name string) string {
	project := p.opts.Project
	if project == "" {
		project = stack
	}
	return pulumiurn.New(stack, project, typ, name)
}

// resURN is the resource's URN as the engine gave it (with the project, the stack and the
// parents' types), or one of Options' project and the resource's stack.
func (p *Provider) resURN(r provider.Resource) string {
	if r.URN != "" {
		return r.URN
	}
	return p.urn(r.StackName, r.Type, r.Name)
}

// Configure checks the configuration with CheckConfig and applies it with Configure. When the
// configuration holds unknowns (a preview) Configure is skipped, as Pulumi does.
func (p *Provider) Configure(ctx context.Context, req provider.ConfigureRequest) (provider.ConfigureResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if req.URN != "" {
		p.confURN = req.URN
	}
	return p.configureLocked(ctx, req.Config)
}

func (p *Provider) configureLocked(ctx context.Context, config cty.Value) (provider.ConfigureResponse, error) {
	var resp provider.ConfigureResponse
	config = withoutInternal(p.withVersion(config))
	urn, pname := p.providerURN(), p.providerName()
	news, err := configEncoder(true).toStruct(config)
	if err != nil {
		return resp, fmt.Errorf("provider %s: configuration: %w", p.opts.Package, err)
	}
	creq := &pulumirpc.CheckRequest{
		Urn: urn, Name: pname, Type: "pulumi:providers:" + p.opts.Package,
		Olds: &structpb.Struct{Fields: map[string]*structpb.Value{}}, News: news, RandomSeed: seed(),
	}
	checked, err := p.proc.client.CheckConfig(ctx, creq)
	if err == nil {
		p.configChecked = &checkConfigMemo{req: creq, resp: checked}
	}
	if err != nil {
		if status.Code(err) != codes.Unimplemented {
			return resp, p.rpcErr("CheckConfig", err)
		}
		checked = &pulumirpc.CheckResponse{Inputs: news}
	}
	if ds := failures(checked.GetFailures(), "configuration of provider "+p.opts.Package); len(ds) > 0 {
		resp.Diagnostics = ds
		return resp, nil
	}
	checkedVal := config
	if ins := checked.GetInputs(); ins != nil {
		if checkedVal, err = fromStruct(ins); err != nil {
			return resp, fmt.Errorf("provider %s: CheckConfig reply: %w", p.opts.Package, err)
		}
		checkedVal = annotateSecrets(checkedVal, config)
	}
	args, err := encoder{secrets: true, preview: true}.toStruct(checkedVal)
	if err != nil {
		return resp, fmt.Errorf("provider %s: configuration: %w", p.opts.Package, err)
	}
	if !checkedVal.IsWhollyKnown() {
		p.configured, p.unconfigured = true, true
		return resp, nil
	}
	vars, err := configVariables(p.opts.Package, checkedVal)
	if err != nil {
		return resp, err
	}
	id, name, typ := unknownString, pname, "pulumi:providers:"+p.opts.Package
	cr, err := p.proc.client.Configure(ctx, &pulumirpc.ConfigureRequest{
		Variables: vars, Args: args,
		AcceptSecrets: true, AcceptResources: true, SendsOldInputs: true, SendsOldInputsToDelete: true,
		Id: &id, Urn: &urn, Name: &name, Type: &typ,
	})
	if err != nil {
		var missing pulumirpc.ConfigureErrorMissingKeys
		for _, d := range status.Convert(err).Details() {
			if m, ok := d.(*pulumirpc.ConfigureErrorMissingKeys); ok {
				missing.MissingKeys = append(missing.MissingKeys, m.GetMissingKeys()...)
			}
		}
		if len(missing.MissingKeys) > 0 {
			for _, k := range missing.MissingKeys {
				resp.Diagnostics = append(resp.Diagnostics, diag.Errorf(diag.Range{}, k.GetName(),
					"missing required configuration key %q of provider %s: %s", k.GetName(), p.opts.Package, k.GetDescription()))
			}
			return resp, nil
		}
		if d, ok := providerDiag(err, "Configure"); ok {
			resp.Diagnostics = append(resp.Diagnostics, d)
			return resp, nil
		}
		return resp, p.rpcErr("Configure", err)
	}
	if !p.handshook {
		p.acceptSecrets, p.acceptResources, p.supportsPreview = cr.GetAcceptSecrets(), cr.GetAcceptResources(), cr.GetSupportsPreview()
	}
	p.configured, p.unconfigured, p.emptyRefused = true, false, false
	return resp, nil
}

// configVariables is Configure's deprecated variables map: "<pkg>:config:<key>" → string,
// non-strings JSON-encoded, without "version".
func configVariables(pkg string, config cty.Value) (map[string]string, error) {
	vars := map[string]string{}
	config, _ = config.Unmark() // the deprecated map is plain text, as pulumi sends it
	for k, v := range config.AsValueMap() {
		if k == "version" {
			continue
		}
		v, _ = v.UnmarkDeep()
		if v.IsNull() {
			continue
		}
		if v.Type() == cty.String {
			vars[pkg+":config:"+k] = v.AsString()
			continue
		}
		b, err := value.ToJSON(v)
		if err != nil {
			return nil, fmt.Errorf("provider %s: configuration %s: %w", pkg, k, err)
		}
		vars[pkg+":config:"+k] = string(b)
	}
	return vars, nil
}

// ready configures the provider with only its version if nobody called Configure first.
func (p *Provider) ready(ctx context.Context) (unconfigured bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.configured {
		return p.unconfigured, nil
	}
	if p.emptyRefused {
		return true, nil
	}
	resp, err := p.configureLocked(ctx, cty.EmptyObjectVal)
	if err != nil {
		return false, err
	}
	if resp.Diagnostics.HasErrors() {
		// The provider needs the configuration its provider resource or the stack config
		// gives, which the engine's Configure brings (a validation before the run calls
		// Check first): until then it answers as Pulumi's unconfigured provider does.
		p.emptyRefused = true
		return true, nil
	}
	return p.unconfigured, nil
}

// encoder for sending to this plugin; preview allows unknowns.
func (p *Provider) enc(preview bool) encoder {
	return encoder{secrets: p.acceptSecrets, preview: preview, byteStrings: p.acceptByteStrings}
}

// decode converts a reply and, for a plugin that does not take secrets, marks again the
// top-level keys that were secret in what was sent.
func (p *Provider) decode(s *structpb.Struct, sent cty.Value) (cty.Value, error) {
	v, err := fromStruct(s)
	if err != nil {
		return cty.NilVal, fmt.Errorf("provider %s: bad reply: %w", p.opts.Package, err)
	}
	if !p.acceptSecrets {
		v = remark(v, secretKeys(sent))
	}
	return v, nil
}

// Check validates a resource's inputs. OldProps are its stored inputs when it exists (Pulumi
// sends them as olds on an update, from which providers keep values they generated before,
// such as auto-names); none for a create or a replacement's new object (olds empty). Props
// may hold unknowns (a preview); the plugin fills defaults.
func (p *Provider) Check(ctx context.Context, req provider.CheckRequest) (provider.CheckResponse, error) {
	olds := req.OldProps
	if olds == cty.NilVal || olds.IsNull() {
		olds = cty.EmptyObjectVal
	}
	var resp provider.CheckResponse
	unconfigured, err := p.ready(ctx)
	if err != nil {
		return resp, err
	}
	if p.isOwn(req.Resource.Type) {
		return p.checkConfig(ctx, req, olds) // providerres.go
	}
	if unconfigured || p.isComponent(ctx, req.Resource.Type) { // Pulumi never Checks a component
		resp.Props = req.Props
		return resp, nil
	}
	news, err := p.enc(true).toStruct(req.Props)
	if err != nil {
		return resp, err
	}
	oldInputs, err := p.enc(true).toStruct(olds) // never nil: some providers rely on it
	if err != nil {
		return resp, err
	}
	r, err := p.proc.client.Check(ctx, &pulumirpc.CheckRequest{
		Urn: p.resURN(req.Resource), Name: req.Resource.Name, Type: req.Resource.Type,
		Olds: oldInputs, News: news, RandomSeed: seed(),
	})
	if err != nil {
		return resp, p.rpcErr("Check", err)
	}
	for _, f := range r.GetFailures() {
		resp.Failures = append(resp.Failures, provider.CheckFailure{Property: f.GetProperty(), Reason: f.GetReason()})
	}
	if len(resp.Failures) > 0 {
		return resp, nil
	}
	if resp.Props, err = p.decode(r.GetInputs(), req.Props); err != nil {
		return resp, err
	}
	return resp, nil
}

// Diff asks the plugin what changing OldProps into NewProps does. A plugin that cannot tell
// (DIFF_UNKNOWN) gets cairn's own comparison of the inputs, as Pulumi's engine does.
func (p *Provider) Diff(ctx context.Context, req provider.DiffRequest) (provider.DiffResponse, error) {
	var resp provider.DiffResponse
	unconfigured, err := p.ready(ctx)
	if err != nil {
		return resp, err
	}
	if p.isOwn(req.Resource.Type) {
		return p.diffConfig(ctx, req) // providerres.go
	}
	if p.isComponent(ctx, req.Resource.Type) {
		return p.diffComponent(ctx, req) // component.go
	}
	if p.configReplaced() {
		// Pulumi replaces every resource of a provider replaced by DiffConfig
		resp = inputDiff(req.OldProps, req.NewProps)
		resp.Changed, resp.Replace = true, true
		return resp, nil
	}
	if req.ID == "" && isNull(req.OldProps) {
		return p.planCreate(ctx, req)
	}
	if unconfigured {
		return inputDiff(req.OldProps, req.NewProps), nil
	}
	olds, oldInputs, news, err := p.enc(true).change(req.OldOutputs, req.OldProps, req.NewProps)
	if err != nil {
		return resp, err
	}
	r, err := p.proc.client.Diff(ctx, &pulumirpc.DiffRequest{
		Id: req.ID, Urn: p.resURN(req.Resource), Name: req.Resource.Name, Type: req.Resource.Type,
		Olds: olds, OldInputs: oldInputs, News: news,
	})
	if err != nil {
		if d, ok := providerDiag(err, "Diff"); ok {
			resp.Diagnostics = append(resp.Diagnostics, d)
			return resp, nil
		}
		return resp, p.rpcErr("Diff", err)
	}
	if r.GetChanges() == pulumirpc.DiffResponse_DIFF_UNKNOWN {
		return replaceOnChanges(unknownDiff(r, req.OldProps, req.NewProps), nil, req.Resource.ReplaceOnChanges), nil
	}
	return replaceOnChanges(diffResult(r), r.GetDetailedDiff(), req.Resource.ReplaceOnChanges), nil
}

// planCreate answers a Diff of a resource that does not exist yet (a preview planning its
// create) as Pulumi's engine previews one: Create with preview=true, whose outputs are known
// where the plugin can tell and unknown elsewhere.
func (p *Provider) planCreate(ctx context.Context, req provider.DiffRequest) (provider.DiffResponse, error) {
	c, err := p.PreviewCreate(ctx, provider.CreateRequest{Resource: req.Resource, Props: req.NewProps})
	if err != nil {
		return provider.DiffResponse{}, err
	}
	return provider.DiffResponse{Changed: true, Planned: c.Outputs, Diagnostics: c.Diagnostics}, nil
}

func isNull(v cty.Value) bool { return v == cty.NilVal || v.IsNull() }

// unknownDiff answers for a plugin that could not tell what changed (DIFF_UNKNOWN) as Pulumi's
// engine does: cairn compares the inputs, and the plugin's replaces, stables and
// delete-before-replace still count.
func unknownDiff(r *pulumirpc.DiffResponse, olds, news cty.Value) provider.DiffResponse {
	resp := inputDiff(olds, news)
	if resp.Changed {
		resp.ReplacePaths = sortedSet(r.GetReplaces())
		resp.Replace = len(resp.ReplacePaths) > 0
	}
	resp.DeleteBeforeReplace, resp.Stables = r.GetDeleteBeforeReplace(), sortedSet(r.GetStables())
	return resp
}

// sortedSet is strs sorted without repeats, nil when empty.
func sortedSet(strs []string) []string {
	if len(strs) == 0 {
		return nil
	}
	return slices.Compact(slices.Sorted(slices.Values(strs)))
}

// diffResult maps a plugin's DiffResponse: replaced when `replaces` is non-empty or any detailed
// entry is a *_REPLACE kind; `deleteBeforeReplace` and `stables` pass through.
func diffResult(r *pulumirpc.DiffResponse) provider.DiffResponse {
	resp := provider.DiffResponse{Changed: r.GetChanges() == pulumirpc.DiffResponse_DIFF_SOME, Planned: cty.NilVal}
	keys := map[string]bool{}
	for _, k := range r.GetDiffs() {
		keys[k] = true
	}
	replace := map[string]bool{}
	for _, k := range r.GetReplaces() {
		replace[k] = true
	}
	for path, d := range r.GetDetailedDiff() {
		keys[topKey(path)] = true
		switch d.GetKind() {
		case pulumirpc.PropertyDiff_ADD_REPLACE, pulumirpc.PropertyDiff_DELETE_REPLACE, pulumirpc.PropertyDiff_UPDATE_REPLACE:
			replace[path] = true
		}
	}
	for k := range replace {
		keys[topKey(k)] = true
	}
	resp.ChangedKeys = slices.Sorted(maps.Keys(keys))
	resp.ReplacePaths = slices.Sorted(maps.Keys(replace))
	resp.Replace = len(resp.ReplacePaths) > 0
	resp.DeleteBeforeReplace, resp.Stables = r.GetDeleteBeforeReplace(), sortedSet(r.GetStables())
	if resp.Replace || len(resp.ChangedKeys) > 0 && r.GetChanges() != pulumirpc.DiffResponse_DIFF_NONE {
		resp.Changed = true
	}
	return resp
}

// topKey is the top-level property of a Pulumi property path ("a.b[0]", "a[\"k\"]", "[\"a.b\"]").
func topKey(path string) string {
	if strings.HasPrefix(path, "[\"") {
		if i := strings.Index(path[2:], "\"]"); i >= 0 {
			return path[2 : 2+i]
		}
	}
	if i := strings.IndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return path
}

// inputDiff compares the inputs top-level key by key (unknowns count as changes).
func inputDiff(olds, news cty.Value) provider.DiffResponse {
	resp := provider.DiffResponse{Planned: cty.NilVal}
	o, n := attrs(olds), attrs(news)
	for k, nv := range n {
		ov, ok := o[k]
		if !ok || !nv.IsWhollyKnown() || !ov.RawEquals(nv) {
			resp.ChangedKeys = append(resp.ChangedKeys, k)
		}
	}
	for k := range o {
		if _, ok := n[k]; !ok {
			resp.ChangedKeys = append(resp.ChangedKeys, k)
		}
	}
	sort.Strings(resp.ChangedKeys)
	resp.Changed = len(resp.ChangedKeys) > 0
	return resp
}

func attrs(v cty.Value) map[string]cty.Value {
	v, _ = v.Unmark()
	if v == cty.NilVal || v.IsNull() || !v.IsKnown() || !(v.Type().IsObjectType() || v.Type().IsMapType()) {
		return nil
	}
	out := map[string]cty.Value{}
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		out[k.AsString()] = e
	}
	return out
}

// Create creates the resource. A plugin's refusal is a diagnostic; a create that left a
// resource behind in a bad state (ErrorResourceInitFailed) reports its id and outputs.
func (p *Provider) Create(ctx context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
	return p.create(ctx, req, false)
}

// PreviewCreate asks the plugin what a create would produce: outputs not known until the
// create are unknown. A plugin that does not support previews returns the inputs.
func (p *Provider) PreviewCreate(ctx context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
	return p.create(ctx, req, true)
}

func (p *Provider) create(ctx context.Context, req provider.CreateRequest, preview bool) (provider.CreateResponse, error) {
	var resp provider.CreateResponse
	unconfigured, err := p.ready(ctx)
	if err != nil {
		return resp, err
	}
	if p.isOwn(req.Resource.Type) {
		return p.createProvider(req, preview), nil // providerres.go
	}
	if p.isComponent(ctx, req.Resource.Type) {
		return p.createComponent(ctx, req, preview) // component.go
	}
	if preview && (unconfigured || !p.supportsPreview) {
		resp.Outputs = req.Props
		return resp, nil
	}
	props, err := p.enc(preview).toStruct(req.Props)
	if err != nil {
		return resp, err
	}
	var r *pulumirpc.CreateResponse
	err = p.call(ctx, func(ctx context.Context) (err error) {
		r, err = p.proc.client.Create(ctx, &pulumirpc.CreateRequest{
			Urn: p.resURN(req.Resource), Name: req.Resource.Name, Type: req.Resource.Type,
			Properties: props, Timeout: seconds(req.Timeout), Preview: preview,
		})
		return err
	})
	if err != nil {
		if init, ok := initFailed(err); ok {
			resp.ID = init.GetId()
			resp.Outputs, _ = p.decode(init.GetProperties(), req.Props)
			resp.Diagnostics = initDiags(init, "Create")
			return resp, nil
		}
		if d, ok := providerDiag(err, "Create"); ok {
			resp.Diagnostics = append(resp.Diagnostics, d)
			// Pulumi's Create is atomic: a refusal the plugin reported means nothing exists,
			// except when the code says the outcome is unknown.
			if !outcomeUnknown(err) {
				resp.NotCreated = "the provider reported that the create failed"
			}
			return resp, nil
		}
		return resp, p.rpcErr("Create", err)
	}
	if !preview && r.GetId() == "" {
		return resp, fmt.Errorf("provider %s: Create of %s returned no id", p.opts.Package, req.Resource.Name)
	}
	resp.ID = r.GetId()
	if resp.Outputs, err = p.decode(r.GetProperties(), req.Props); err != nil {
		return resp, err
	}
	if !preview && !resp.Outputs.IsWhollyKnown() {
		return resp, fmt.Errorf("provider %s: Create of %s returned unknown outputs outside a preview", p.opts.Package, req.Resource.Name)
	}
	return resp, nil
}

// Read refreshes the resource; an empty ID in the response means it is gone.
func (p *Provider) Read(ctx context.Context, req provider.ReadRequest) (provider.ReadResponse, error) {
	var resp provider.ReadResponse
	if _, err := p.ready(ctx); err != nil {
		return resp, err
	}
	if p.isOwn(req.Resource.Type) || p.isComponent(ctx, req.Resource.Type) { // exists as long as its row
		return provider.ReadResponse{ID: req.ID, Props: req.Props, Outputs: req.Outputs, Private: req.Private}, nil
	}
	outs, ins, err := p.stored(req.Outputs, req.Props)
	if err != nil {
		return resp, err
	}
	var r *pulumirpc.ReadResponse
	err = p.call(ctx, func(ctx context.Context) (err error) {
		r, err = p.proc.client.Read(ctx, &pulumirpc.ReadRequest{
			Id: req.ID, Urn: p.resURN(req.Resource), Name: req.Resource.Name, Type: req.Resource.Type,
			Properties: outs, Inputs: ins,
		})
		return err
	})
	if err != nil {
		if init, ok := initFailed(err); ok {
			resp.ID = init.GetId()
			resp.Outputs, _ = p.decode(init.GetProperties(), req.Outputs)
			resp.Props, resp.PropsRead = req.Props, true
			if init.GetInputs() != nil {
				resp.Props, _ = p.decode(init.GetInputs(), req.Props)
			}
			resp.Diagnostics = initDiags(init, "Read")
			return resp, nil
		}
		if d, ok := providerDiag(err, "Read"); ok {
			resp.Diagnostics = append(resp.Diagnostics, d)
			return resp, nil
		}
		return resp, p.rpcErr("Read", err)
	}
	resp.ID = r.GetId()
	if resp.ID == "" {
		return resp, nil
	}
	if resp.Outputs, err = p.decode(r.GetProperties(), req.Outputs); err != nil {
		return resp, err
	}
	resp.Props, resp.PropsRead = req.Props, true // Pulumi keeps the inputs when the plugin reads none
	if r.GetInputs() != nil {
		if resp.Props, err = p.decode(r.GetInputs(), req.Props); err != nil {
			return resp, err
		}
	}
	return p.refreshDiff(ctx, req, resp) // refresh.go
}

// Update changes the resource in place.
func (p *Provider) Update(ctx context.Context, req provider.UpdateRequest) (provider.UpdateResponse, error) {
	return p.update(ctx, req, false)
}

// PreviewUpdate asks the plugin what an update would produce, unknown where not known yet.
func (p *Provider) PreviewUpdate(ctx context.Context, req provider.UpdateRequest) (provider.UpdateResponse, error) {
	return p.update(ctx, req, true)
}

func (p *Provider) update(ctx context.Context, req provider.UpdateRequest, preview bool) (provider.UpdateResponse, error) {
	resp := provider.UpdateResponse{ID: req.ID}
	unconfigured, err := p.ready(ctx)
	if err != nil {
		return resp, err
	}
	if p.isOwn(req.Resource.Type) { // the new configuration is what the instance was configured with
		resp.Outputs = req.NewProps
		return resp, nil
	}
	if p.isComponent(ctx, req.Resource.Type) {
		return p.updateComponent(ctx, req, preview) // component.go
	}
	if preview && (unconfigured || !p.supportsPreview) {
		resp.Outputs = req.NewProps
		return resp, nil
	}
	olds, oldInputs, news, err := p.enc(preview).change(req.OldOutputs, req.OldProps, req.NewProps)
	if err != nil {
		return resp, err
	}
	var r *pulumirpc.UpdateResponse
	err = p.call(ctx, func(ctx context.Context) (err error) {
		r, err = p.proc.client.Update(ctx, &pulumirpc.UpdateRequest{
			Id: req.ID, Urn: p.resURN(req.Resource), Name: req.Resource.Name, Type: req.Resource.Type,
			Olds: olds, OldInputs: oldInputs, News: news, Timeout: seconds(req.Timeout), Preview: preview,
		})
		return err
	})
	if err != nil {
		if init, ok := initFailed(err); ok {
			resp.Outputs, _ = p.decode(init.GetProperties(), req.NewProps)
			resp.Diagnostics = initDiags(init, "Update")
			return resp, nil
		}
		if d, ok := providerDiag(err, "Update"); ok {
			resp.Diagnostics = append(resp.Diagnostics, d)
			return resp, nil
		}
		return resp, p.rpcErr("Update", err)
	}
	if resp.Outputs, err = p.decode(r.GetProperties(), req.NewProps); err != nil {
		return resp, err
	}
	if !preview && !resp.Outputs.IsWhollyKnown() {
		return resp, fmt.Errorf("provider %s: Update of %s returned unknown outputs outside a preview", p.opts.Package, req.Resource.Name)
	}
	return resp, nil
}

// stored encodes a resource's stored outputs and inputs for a call that acts on what exists
// (Read, Delete): no unknowns allowed.
func (p *Provider) stored(outputs, inputs cty.Value) (outs, ins *structpb.Struct, err error) {
	enc := p.enc(false)
	if outs, err = enc.toStruct(outputs); err != nil {
		return nil, nil, err
	}
	ins, err = enc.toStruct(inputs)
	return outs, ins, err
}

// change encodes what Diff and Update both send: the last outputs, the last inputs and the
// new inputs.
func (e encoder) change(oldOutputs, oldInputs, newInputs cty.Value) (olds, oldIns, news *structpb.Struct, err error) {
	if olds, err = e.toStruct(oldOutputs); err != nil {
		return nil, nil, nil, err
	}
	if oldIns, err = e.toStruct(oldInputs); err != nil {
		return nil, nil, nil, err
	}
	if news, err = e.toStruct(newInputs); err != nil {
		return nil, nil, nil, err
	}
	return olds, oldIns, news, nil
}

// Delete deletes the resource: properties are its last outputs, old inputs its last inputs.
func (p *Provider) Delete(ctx context.Context, req provider.DeleteRequest) (provider.DeleteResponse, error) {
	var resp provider.DeleteResponse
	if p.isOwn(req.Resource.Type) {
		return resp, nil // nothing in the plugin to delete
	}
	if _, err := p.ready(ctx); err != nil {
		return resp, err
	}
	if p.isComponent(ctx, req.Resource.Type) {
		return p.deleteComponent(ctx, req) // component.go
	}
	outs, ins, err := p.stored(req.Outputs, req.Props)
	if err != nil {
		return resp, err
	}
	err = p.call(ctx, func(ctx context.Context) error {
		_, err := p.proc.client.Delete(ctx, &pulumirpc.DeleteRequest{
			Id: req.ID, Urn: p.resURN(req.Resource), Name: req.Resource.Name, Type: req.Resource.Type,
			Properties: outs, OldInputs: ins, Timeout: seconds(req.Timeout),
		})
		return err
	})
	if err != nil {
		if d, ok := providerDiag(err, "Delete"); ok {
			resp.Diagnostics = append(resp.Diagnostics, d)
			return resp, nil
		}
		return resp, p.rpcErr("Delete", err)
	}
	return resp, nil
}

// ReadData calls a provider function (Invoke): Resource.Type is its token, Config its arguments.
func (p *Provider) ReadData(ctx context.Context, req provider.ReadDataRequest) (provider.ReadDataResponse, error) {
	var resp provider.ReadDataResponse
	if _, err := p.ready(ctx); err != nil {
		return resp, err
	}
	preview := !req.Config.IsWhollyKnown()
	args, err := p.enc(preview).toStruct(req.Config)
	if err != nil {
		return resp, err
	}
	r, err := p.proc.client.Invoke(ctx, &pulumirpc.InvokeRequest{Tok: req.Resource.Type, Args: args, Preview: preview})
	if err != nil {
		if d, ok := providerDiag(err, "Invoke"); ok {
			resp.Diagnostics = append(resp.Diagnostics, d)
			return resp, nil
		}
		return resp, p.rpcErr("Invoke", err)
	}
	if ds := failures(r.GetFailures(), "function "+req.Resource.Type); len(ds) > 0 {
		resp.Diagnostics = ds
		return resp, nil
	}
	if resp.State, err = p.decode(r.GetReturn(), req.Config); err != nil {
		return resp, err
	}
	return resp, nil
}

// Import reads the object ID names (Read with the id only).
func (p *Provider) Import(ctx context.Context, req provider.ImportRequest) (provider.ImportResponse, error) {
	r, err := p.Read(ctx, provider.ReadRequest{Resource: req.Resource, ID: req.ID})
	if err != nil {
		return provider.ImportResponse{}, err
	}
	if r.ID == "" && !r.Diagnostics.HasErrors() {
		r.Diagnostics = append(r.Diagnostics, diag.Errorf(diag.Range{}, "", "%s %q does not exist", req.Resource.Type, req.ID))
	}
	return provider.ImportResponse{ID: r.ID, Outputs: r.Outputs, Diagnostics: r.Diagnostics}, nil
}

// failures turns Check failures into error diagnostics.
func failures(fs []*pulumirpc.CheckFailure, what string) diag.Diagnostics {
	var ds diag.Diagnostics
	for _, f := range fs {
		ds = append(ds, diag.Errorf(diag.Range{}, f.GetProperty(), "%s: %s", what, f.GetReason()))
	}
	return ds
}

func initFailed(err error) (*pulumirpc.ErrorResourceInitFailed, bool) {
	for _, d := range status.Convert(err).Details() {
		if e, ok := d.(*pulumirpc.ErrorResourceInitFailed); ok {
			return e, true
		}
	}
	return nil, false
}

func initDiags(e *pulumirpc.ErrorResourceInitFailed, op string) diag.Diagnostics {
	reasons := e.GetReasons()
	if len(reasons) == 0 {
		reasons = []string{"the resource was left unhealthy"}
	}
	var ds diag.Diagnostics
	for _, r := range reasons {
		ds = append(ds, diag.Errorf(diag.Range{}, "", "%s: %s", op, r))
	}
	return ds
}

// providerDiag turns an error the plugin returned (as opposed to a transport failure or a
// crash) into a diagnostic for the user.
func providerDiag(err error, op string) (diag.Diagnostic, bool) {
	st, ok := status.FromError(err)
	if !ok {
		return diag.Diagnostic{}, false
	}
	switch st.Code() {
	case codes.Unavailable, codes.Canceled, codes.DeadlineExceeded, codes.Unimplemented, codes.ResourceExhausted:
		return diag.Diagnostic{}, false
	}
	return diag.Errorf(diag.Range{}, "", "%s: %s", op, st.Message()), true
}

// outcomeUnknown: Pulumi reads these codes on a mutating call as "may have happened".
func outcomeUnknown(err error) bool {
	switch status.Code(err) {
	case codes.Internal, codes.DataLoss, codes.Unknown:
		return true
	}
	return false
}

func (p *Provider) rpcErr(op string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("provider %s: %s: %w", p.opts.Package, op, p.proc.crashed(err))
}

func seconds(d time.Duration) float64 { return d.Seconds() }

// seed is Check's randomSeed: 32 fresh bytes per registration, as Pulumi sends.
func seed() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return b
}
