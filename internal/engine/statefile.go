package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/tfstate"
	"github.com/cairn-dev/cairn/internal/value"
)

// PullState writes a stack as its tool's state file: a Terraform-language stack as a terraform
// state (format version 4), with which terraform plan on the same configuration and provider
// binaries has nothing to do; a stack whose dialect has its own format (policy.StateFormat) in
// that format. The stack's last configuration gives the provider sources and the outputs,
// evaluated against the stored resources.
func (e *Engine) PullState(ctx context.Context, stack string, opts api.StatePullOptions) ([]byte, error) {
	ctx, stop := budget.With(ctx, e.o.Limits)
	defer stop()
	if err := validStackName(stack); err != nil {
		return nil, err
	}
	key := stackKey(ctx, stack)
	row, err := e.store.GetStack(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("cannot find stack %s: %w", stack, err)
	}
	if pol := policyOf(row.Dialect); !pol.StateFiles && pol.StateFormat == nil {
		return nil, &ValidationError{Diagnostics: diag.Diagnostics{diag.Errorf(diag.Range{}, "",
			"stack %s is a %s stack, which has no state file format", stack, pol.Name)}}
	}
	var src api.DeployRequest
	if err := json.Unmarshal(row.Template, &src); err != nil {
		return nil, fmt.Errorf("cannot decode the configuration of stack %s: %w", stack, err)
	}
	st, ps, diags := e.load(ctx, stack, row.ID, sourceOf(src), 0)
	if st == nil {
		return nil, &ValidationError{Diagnostics: diags}
	}
	defer ps.close()
	rows, err := e.store.ListResources(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("cannot read resources of stack %s: %w", stack, err)
	}
	sc := newScope(ctx, st)
	for _, r := range rows {
		if st.Resource(r.Name) != nil && r.Status != "CREATE_FAILED" {
			if err := sc.setRow(r); err != nil {
				return nil, err
			}
		}
	}
	if f := st.Policy.StateFormat; f != nil {
		snap, err := snapshotOf(row, rows)
		if err != nil {
			return nil, err
		}
		return f.Encode(ctx, st, snap, template.StateKeys{Passphrase: opts.Passphrase, ShowSecrets: opts.ShowSecrets})
	}
	lineage, serial, err := e.lineage(ctx, row)
	if err != nil {
		return nil, err
	}
	out := &tfstate.State{TerraformVersion: tfstate.TerraformVersion, Serial: serial, Lineage: lineage,
		Outputs: map[string]tfstate.Output{}}
	for _, o := range st.Outputs {
		v, ds := o.Value.Eval(sc)
		if ds.HasErrors() || !v.IsWhollyKnown() {
			continue // it needs a data source or a resource the stack does not hold: terraform plans it anew
		}
		if o, ok, err := stateOutput(o, v); err != nil {
			return nil, err
		} else if ok {
			out.Outputs[o.name] = o.out
		}
	}
	byResource := map[string]*tfstate.Resource{}
	for _, r := range rows {
		inst, res, err := stateInstance(ctx, st, ps, r)
		if err != nil {
			return nil, err
		}
		if res == nil {
			continue
		}
		k := res.Module + "\x00" + res.Type + "\x00" + res.Name
		if have, ok := byResource[k]; ok {
			have.Instances = append(have.Instances, inst)
			continue
		}
		res.Instances = []tfstate.Instance{inst}
		byResource[k] = res
	}
	for _, k := range sortedKeys(byResource) {
		out.Resources = append(out.Resources, *byResource[k])
	}
	return tfstate.Encode(out)
}

type namedOutput struct {
	name string
	out  tfstate.Output
}

// stateOutput is a root output as terraform stores it; null outputs are not stored.
func stateOutput(o *template.Output, v cty.Value) (namedOutput, bool, error) {
	v, _ = v.UnmarkDeep()
	if v.IsNull() {
		return namedOutput{}, false, nil
	}
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		return namedOutput{}, false, fmt.Errorf("cannot encode output %s: %w", o.Name, err)
	}
	t, err := ctyjson.MarshalType(v.Type())
	if err != nil {
		return namedOutput{}, false, fmt.Errorf("cannot encode the type of output %s: %w", o.Name, err)
	}
	return namedOutput{o.Name, tfstate.Output{Value: b, Type: t, Sensitive: o.Sensitive}}, true, nil
}

// stateInstance is a resource row as a state file instance, with its resource (nil for a row
// that holds no object: a create that failed before the provider made one).
func stateInstance(ctx context.Context, st *template.Stack, ps *providerSet, r state.Resource) (tfstate.Instance, *tfstate.Resource, error) {
	tainted := r.Status == "CREATE_FAILED"
	if (!applied(r) && !tainted && r.Status != "UPDATE_FAILED") || (tainted && r.ID == "") || len(r.Outputs) == 0 {
		return tfstate.Instance{}, nil, nil
	}
	a, err := tfstate.ParseAddr(r.Name)
	if err != nil {
		return tfstate.Instance{}, nil, fmt.Errorf("cannot write %s to a terraform state: %w", r.Name, err)
	}
	pa, err := tfProvider(st, r.Provider)
	if err != nil {
		return tfstate.Instance{}, nil, fmt.Errorf("cannot write %s to a terraform state: %w", r.Name, err)
	}
	v, err := value.Unmarshal(r.Outputs)
	if err != nil {
		return tfstate.Instance{}, nil, fmt.Errorf("cannot decode the state of %s: %w", r.Name, err)
	}
	plain, pvm := v.UnmarkDeepWithPaths()
	attrs, err := value.ToJSON(plain)
	if err != nil {
		return tfstate.Instance{}, nil, fmt.Errorf("cannot encode the state of %s: %w", r.Name, err)
	}
	inst := tfstate.Instance{IndexKey: a.Key, Attributes: attrs, Private: r.Private}
	if tainted {
		inst.Status = "tainted"
	}
	var paths []cty.Path
	for _, pm := range pvm {
		if _, ok := pm.Marks[value.Sensitive]; ok {
			paths = append(paths, pm.Path)
		}
	}
	if inst.SensitiveAttributes, err = tfstate.MarshalPaths(paths); err != nil {
		return tfstate.Instance{}, nil, err
	}
	if p, err := ps.lookup(r.Type, r.Provider); err == nil {
		if pst, ok := p.(provider.PrivateState); ok {
			ver, own, err := pst.SplitPrivate(ctx, r.Type, r.Private)
			if err != nil {
				return tfstate.Instance{}, nil, fmt.Errorf("cannot read the schema version of %s: %w", r.Name, err)
			}
			inst.SchemaVersion, inst.Private = uint64(max(ver, 0)), own
		}
	}
	deps := map[string]bool{}
	for _, d := range r.Deps {
		if da, err := tfstate.ParseAddr(d); err == nil && da.Mode == tfstate.Managed {
			deps[da.Config()] = true
		}
	}
	inst.Dependencies = sortedKeys(deps)
	if res := st.Resource(r.Name); res != nil {
		inst.CreateBeforeDestroy = res.CreateBeforeDestroy
	}
	return inst, &tfstate.Resource{Module: a.Module, Mode: tfstate.Managed, Type: a.Type, Name: a.Name, Provider: pa.String()}, nil
}

// tfProvider is the terraform address of cairn's provider configuration addr
// ("module.m.provider.time.west"): its module path, source and alias.
func tfProvider(st *template.Stack, addr string) (tfstate.ProviderAddr, error) {
	var pa tfstate.ProviderAddr
	i := strings.LastIndex(addr, "provider.")
	if i < 0 {
		return pa, fmt.Errorf("%q is not a provider configuration address", addr)
	}
	if i > 0 {
		mod, err := tfstate.ParseModule(strings.TrimSuffix(addr[:i], "."))
		if err != nil {
			return pa, err
		}
		pa.Module = mod
	}
	local, alias, _ := strings.Cut(addr[i+len("provider."):], ".")
	pa.Alias = alias
	if req := st.Requirement(local); req != nil {
		pa.Source = req.Source
	} else {
		pa.Source = "registry.terraform.io/hashicorp/" + local
	}
	return pa, nil
}

// localProvider is cairn's provider configuration address for a terraform one, found among
// the configuration's provider configurations by module path, source and alias.
func localProvider(st *template.Stack, pa tfstate.ProviderAddr) (string, bool) {
	for _, cfg := range st.Providers {
		got, err := tfProvider(st, cfg.Addr)
		if err == nil && got == pa {
			return cfg.Addr, true
		}
	}
	return "", false
}

// lineage is the stack's terraform lineage and the serial of its state now: those of the
// state last pushed, the serial grown by the stack's events since, so that a pull after a
// change has a higher one; a stack never pushed has a lineage made from its id. It reads one
// row of the event index, however many events the stack has.
func (e *Engine) lineage(ctx context.Context, row state.Stack) (string, uint64, error) {
	last, err := e.store.LastEventSeq(ctx, keyOf(row))
	if err != nil {
		return "", 0, fmt.Errorf("cannot read events of stack %s: %w", row.Name, err)
	}
	var id tfIdentity // statepush.go
	if len(row.TFState) > 0 {
		if err := json.Unmarshal(row.TFState, &id); err != nil {
			return "", 0, fmt.Errorf("cannot decode the terraform lineage of stack %s: %w", row.Name, err)
		}
	}
	if id.Lineage == "" {
		return lineageOf(row.ID), uint64(max(last, 0)), nil
	}
	return id.Lineage, id.Serial + uint64(max(last-id.EventSeq, 0)), nil
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// lineageOf is a stack id as a lineage (a UUID): the id itself when it is one.
func lineageOf(id string) string {
	if uuidRE.MatchString(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	h := hex.EncodeToString(sum[:16])
	return h[0:8] + "-" + h[8:12] + "-4" + h[13:16] + "-8" + h[17:20] + "-" + h[20:32]
}
