package pulumistate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/provider/pulumirpc"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/template"
)

// Version is the engine version written in a deployment's manifest.
const Version = "cairn-pulumi-v3"

// Format is the deployment format of the stacks of one Pulumi project.
type Format struct {
	Project string
	// DefaultProvider says whether a provider address is a package's default provider, and
	// which package and version (version "" when the program pins none).
	DefaultProvider func(addr string) (pkg, version string, ok bool)
	// ProviderResource is the name of the provider resource whose configuration addr is, ""
	// when addr is no resource's (a default provider).
	ProviderResource func(addr string) string
	// DefaultInternal, when set, gives the engine settings Pulumi keeps under a default
	// provider's __internal input (a parameterized package's base plugin, its
	// pluginDownloadURL); nil or empty: none.
	DefaultInternal func(addr string) map[string]any
	// DefaultConfig, when set, gives a default provider's configuration (the stack config's
	// `<pkg>:key` values), which Pulumi stores as its inputs and outputs beside version.
	DefaultConfig func(addr string) cty.Value
}

var _ template.StateFormat = Format{}

// Name names the format in messages.
func (Format) Name() string { return "a Pulumi deployment" }

// Encode writes snap as `pulumi stack export` does: the stack resource with the outputs, the
// default providers, then the resources with dependencies before their dependents.
func (f Format) Encode(ctx context.Context, st *template.Stack, snap template.StateSnapshot, keys template.StateKeys) ([]byte, error) {
	u := urns{stack: snap.Stack, project: f.Project, st: st}
	s := &sealer{passphrase: keys.Passphrase, clear: keys.ShowSecrets}
	stackURN := u.stackURN()
	stackOut := map[string]any{}
	for _, o := range snap.Outputs {
		v, err := s.encode(ctx, o.Value)
		if err != nil {
			return nil, fmt.Errorf("output %s: %w", o.Name, err)
		}
		stackOut[o.Name] = v
	}
	now := time.Now().UTC()
	out := []resourceState{{URN: stackURN, Type: stackType, Outputs: nilIfEmpty(stackOut), Created: &now, Modified: &now}}

	rows := map[string]*template.StateResource{}
	for i := range snap.Resources {
		if !snap.Resources[i].PendingDelete { // an old object is no one's dependency or provider
			rows[snap.Resources[i].Name] = &snap.Resources[i]
		}
	}
	// providerRef is what a resource's "provider" field holds: the provider's URN and id.
	providerRefs := map[string]string{}
	providerRef := func(addr string) (string, error) {
		if ref, ok := providerRefs[addr]; ok {
			return ref, nil
		}
		if r, ok := rows[f.providerResource(addr)]; ok { // an explicit provider resource, stored as a resource
			ref := u.urn(r.Name, r.Type) + "::" + r.ID
			providerRefs[addr] = ref
			return ref, nil
		}
		pkg, version, ok := f.defaultProvider(addr)
		if !ok {
			return "", fmt.Errorf("provider %s is neither a default provider nor a resource of the stack", addr)
		}
		internal := map[string]any{}
		if f.DefaultInternal != nil && f.DefaultInternal(addr) != nil {
			internal = f.DefaultInternal(addr)
		}
		url, _ := internal["pluginDownloadURL"].(string)
		name := DefaultProviderName(version, url)
		inputs := map[string]any{"__internal": internal}
		outputs := map[string]any{}
		if f.DefaultConfig != nil {
			config, err := s.encodeObject(ctx, f.DefaultConfig(addr))
			if err != nil {
				return "", fmt.Errorf("the configuration of %s: %w", addr, err)
			}
			for k, v := range config {
				inputs[k], outputs[k] = v, v
			}
		}
		if pkg == "pulumi" {
			inputs = nil // the engine's own provider: Pulumi writes it without inputs
		}
		if version != "" {
			if inputs != nil {
				inputs["version"] = version
			}
			outputs["version"] = version
		}
		purn := u.urn(name, "pulumi:providers:"+pkg)
		id := providerID(snap.StackID, addr)
		out = append(out, resourceState{URN: purn, Custom: true, ID: id, Type: "pulumi:providers:" + pkg,
			Inputs: inputs, Outputs: nilIfEmpty(outputs), Created: &now, Modified: &now})
		ref := purn + "::" + id
		providerRefs[addr] = ref
		return ref, nil
	}

	done := map[*template.StateResource]bool{}
	var visit func(r *template.StateResource, path []string) error
	visit = func(r *template.StateResource, path []string) error {
		if done[r] {
			return nil
		}
		for _, p := range path {
			if p == r.Name {
				return fmt.Errorf("resources depend on each other in a cycle: %s", strings.Join(append(path, r.Name), " -> "))
			}
		}
		path = append(path, r.Name)
		var deps []string
		parent := u.parent(r.Name)
		for _, d := range r.Deps {
			if d == parent || replacesWith(st, r.Name, d) {
				continue // cairn orders a child after its parent (a resource after its replaceWith); Pulumi's state does not list it as a dependency
			}
			if d == f.providerResource(r.Provider) && d != r.Name && !usesInProperties(st, r.Name, d) {
				continue // nor its provider resource, which the provider reference names (propdeps.go)
			}
			if dr, ok := rows[d]; ok {
				if err := visit(dr, path); err != nil {
					return err
				}
				deps = append(deps, u.urn(dr.Name, dr.Type))
			}
		}
		if p := u.parent(r.Name); p != "" {
			if pr, ok := rows[p]; ok {
				if err := visit(pr, path); err != nil {
					return err
				}
			}
		}
		if pr, ok := rows[f.providerResource(r.Provider)]; ok && pr != r {
			if err := visit(pr, path); err != nil {
				return err
			}
		}
		done[r] = true
		rs := resourceState{URN: u.urn(r.Name, r.Type), Custom: true, ID: r.ID, Type: r.Type, Dependencies: deps, Delete: r.PendingDelete}
		if !strings.HasPrefix(r.Type, "pulumi:providers:") || r.Provider != "" {
			rs.Parent = stackURN
			if p := u.parent(r.Name); p != "" {
				if pr, ok := rows[p]; ok {
					rs.Parent = u.urn(pr.Name, pr.Type)
				}
			}
		}
		if r.Provider != "" && f.providerResource(r.Provider) != r.Name {
			ref, err := providerRef(r.Provider)
			if err != nil {
				return fmt.Errorf("%s: %w", r.Name, err)
			}
			rs.Provider = ref
		}
		var err error
		if rs.Inputs, err = s.encodeObject(ctx, r.Inputs); err != nil {
			return fmt.Errorf("the inputs of %s: %w", r.Name, err)
		}
		if strings.HasPrefix(r.Type, "pulumi:providers:") {
			if rs.Inputs == nil {
				rs.Inputs = map[string]any{}
			}
			if _, ok := rs.Inputs["__internal"]; !ok { // the engine's own provider settings, as Pulumi writes them
				rs.Inputs["__internal"] = map[string]any{}
			}
			withEnvVarMappings(rs.Inputs, st, r.Provider)
		}
		if rs.Outputs, err = s.encodeObject(ctx, r.Outputs); err != nil {
			return fmt.Errorf("the outputs of %s: %w", r.Name, err)
		}
		rs.Protect, rs.RetainOnDelete = r.Protect, r.Retain // as stored: a resource removed from the program keeps them
		if res := st.Resource(r.Name); res != nil {
			rs.AdditionalSecretOutputs = res.SecretOutputs
			rs.ImportID = res.ImportID
			rs.ReplaceOnChanges = res.ReplaceOnChanges
			if t := res.Timeouts; t != (template.Timeouts{}) {
				rs.CustomTimeouts = &customTimeouts{Create: t.Create.Seconds(), Update: t.Update.Seconds(), Delete: t.Delete.Seconds(), Read: t.Read.Seconds()}
			}
			rs.IgnoreChanges = res.IgnoreChangesText
			if len(rs.IgnoreChanges) == 0 {
				for _, p := range res.IgnoreChanges {
					rs.IgnoreChanges = append(rs.IgnoreChanges, pathString(p))
				}
			}
			rs.HideDiff = res.HideDiffs
			for _, name := range res.ReplaceWith {
				if dr, ok := rows[name]; ok {
					rs.ReplaceWith = append(rs.ReplaceWith, u.urn(dr.Name, dr.Type))
				}
			}
			if res.DeletedWith != "" {
				if dr, ok := rows[res.DeletedWith]; ok {
					rs.DeletedWith = u.urn(dr.Name, dr.Type)
				}
			}
		}
		if r.Failed {
			rs.InitErrors = initErrors(r.FailReason)
		}
		if res := st.Resource(r.Name); res != nil {
			for k, names := range propertyDependencies(st, res) { // propdeps.go
				if rs.PropertyDependencies == nil {
					rs.PropertyDependencies = map[string][]string{}
				}
				urns := []string{}
				for _, n := range names {
					if dr, ok := rows[n]; ok {
						urns = append(urns, u.urn(dr.Name, dr.Type))
					}
				}
				rs.PropertyDependencies[k] = urns
			}
		}
		if !r.Modified.IsZero() {
			m := r.Modified.UTC()
			rs.Created, rs.Modified = &m, &m
		}
		if cs, ok, err := pulumirpc.DecodeComponentState(r.Private); err != nil || ok {
			if err != nil {
				return fmt.Errorf("%s: %w", r.Name, err)
			}
			ref, err := providerRef(r.Provider)
			if err != nil {
				return fmt.Errorf("%s: %w", r.Name, err)
			}
			states, err := componentStates(ctx, u, s, rs, cs, ref, rs.Modified)
			if err != nil {
				return fmt.Errorf("%s: %w", r.Name, err)
			}
			out = append(out, states...)
			return nil
		}
		out = append(out, rs)
		return nil
	}
	for _, res := range st.Resources {
		if res.Mode == template.Data && res.Provider != "" { // an invoke's provider is in the state too, as Pulumi's engine registers it
			if _, err := providerRef(res.Provider); err != nil {
				return nil, fmt.Errorf("%s: %w", res.Name, err)
			}
		}
	}
	for i := range snap.Resources {
		if res := st.Resource(snap.Resources[i].Name); res != nil && res.Mode == template.Data {
			continue // an invoke's result: not a resource in Pulumi's state
		}
		if err := visit(&snap.Resources[i], nil); err != nil {
			return nil, err
		}
	}
	d := deployment{Manifest: manifest{Time: now, Magic: magic(Version), Version: Version}, SecretsProviders: s.provider, Resources: out}
	raw, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, mustJSON(untypedDeployment{Version: deploymentVersion, Deployment: raw}), "", "    "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// Decode reads a deployment for st: every custom resource that is not a provider becomes a
// resource of the stack, by the name in its URN, which st must declare with the same type.
// Providers are not kept: the program's providers serve the resources.
func (f Format) Decode(ctx context.Context, st *template.Stack, b []byte, keys template.StateKeys) (template.StateSnapshot, error) {
	var ud untypedDeployment
	if err := json.Unmarshal(b, &ud); err != nil {
		return template.StateSnapshot{}, fmt.Errorf("not a Pulumi deployment: %w", err)
	}
	if ud.Version < 1 || ud.Version > deploymentVersion || len(ud.Deployment) == 0 {
		return template.StateSnapshot{}, fmt.Errorf("not a Pulumi deployment of version %d (its version: %d)", deploymentVersion, ud.Version)
	}
	dec := json.NewDecoder(bytes.NewReader(ud.Deployment))
	dec.UseNumber()
	var d deployment
	if err := dec.Decode(&d); err != nil {
		return template.StateSnapshot{}, fmt.Errorf("not a Pulumi deployment: %w", err)
	}
	if len(d.PendingOperations) > 0 {
		return template.StateSnapshot{}, fmt.Errorf("the deployment has %d pending operation(s): an update was interrupted; "+
			"resolve them (pulumi refresh, or pulumi stack export/import removing them) before moving it", len(d.PendingOperations))
	}
	o := &opener{passphrase: keys.Passphrase, provider: d.SecretsProviders}
	if keys.Passphrase != "" && d.SecretsProviders != nil && d.SecretsProviders.Type == "passphrase" {
		// A passphrase given is checked even when no resource secret needs it: a wrong one is
		// a mistake to say, not to ignore.
		c, err := o.decrypter()
		if err != nil {
			return template.StateSnapshot{}, err
		}
		o.crypter = c
	}
	var snap template.StateSnapshot
	seen := map[string]bool{}
	if err := refuseComponents(d.Resources); err != nil {
		return snap, err
	}
	for _, r := range d.Resources {
		if r.Type == stackType && !r.Custom {
			outs, err := o.decodeObject(ctx, r.Outputs)
			if err != nil {
				return snap, fmt.Errorf("the stack's outputs: %w", err)
			}
			for it := outs.ElementIterator(); it.Next(); {
				k, v := it.Element()
				snap.Outputs = append(snap.Outputs, template.StateOutput{Name: k.AsString(), Value: v})
			}
			continue
		}
		if r.Delete && r.Custom {
			return snap, fmt.Errorf("the deployment holds %s awaiting deletion (delete: true, an old copy of a replacement): "+
				"let pulumi up finish deleting it before moving the stack", r.URN)
		}
		if !r.Custom {
			continue
		}
		name, err := urnName(r.URN)
		if err != nil {
			return snap, err
		}
		if strings.HasPrefix(r.Type, "pulumi:providers:") && st.Resource(name) == nil {
			continue // a default provider: the program's serve the resources
		}
		res := st.Resource(name)
		if res == nil {
			return snap, fmt.Errorf("the deployment's resource %s (%s) is not in the program", name, r.Type)
		}
		if seen[name] {
			return snap, fmt.Errorf("the deployment holds resource %s twice", name)
		}
		seen[name] = true
		if r.ID == "" {
			return snap, fmt.Errorf("the deployment's resource %s has no id", name)
		}
		if res.Type != r.Type {
			return snap, fmt.Errorf("resource %s is a %s in the deployment and a %s in the program", name, r.Type, res.Type)
		}
		in, err := o.decodeObject(ctx, r.Inputs)
		if err != nil {
			return snap, fmt.Errorf("the inputs of %s: %w", name, err)
		}
		outs, err := o.decodeObject(ctx, r.Outputs)
		if err != nil {
			return snap, fmt.Errorf("the outputs of %s: %w", name, err)
		}
		var deps []string
		for _, d := range r.Dependencies {
			if n, err := urnName(d); err == nil && n != name && st.Resource(n) != nil { // the program's resources only
				deps = append(deps, n)
			}
		}
		sr := template.StateResource{Name: name, Type: r.Type, ID: r.ID, Provider: res.Provider, Inputs: in, Outputs: outs,
			Deps: deps, Failed: len(r.InitErrors) > 0, Protect: r.Protect, Retain: r.RetainOnDelete,
			FailReason: strings.Join(r.InitErrors, "; ")}
		if r.Modified != nil {
			sr.Modified = *r.Modified
		}
		snap.Resources = append(snap.Resources, sr)
	}
	return snap, nil
}

func (f Format) providerResource(addr string) string {
	if f.ProviderResource == nil {
		return addr
	}
	return f.ProviderResource(addr)
}

func (f Format) defaultProvider(addr string) (string, string, bool) {
	if f.DefaultProvider == nil {
		return "", "", false
	}
	return f.DefaultProvider(addr)
}

const stackType = "pulumi:pulumi:Stack"

// providerID is the id of a default provider: Pulumi makes one UUID per provider; cairn
// derives it from the stack and the provider, so every pull of a stack writes the same.
func providerID(stackID, addr string) string {
	h := sha256.Sum256([]byte(stackID + "\x00" + addr))
	x := hex.EncodeToString(h[:16])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

func magic(version string) string {
	h := sha256.Sum256([]byte(version))
	return hex.EncodeToString(h[:])
}

func nilIfEmpty(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	return m
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps, strings and raw JSON already checked
	}
	return b
}
