package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/api"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/template"
)

// Ephemeral resources of the Terraform language (terraform 1.10+). As terraform does, a run
// (and a preview, terraform's plan) opens every ephemeral resource instance: each when
// something first evaluates it (a provider configuration, another ephemeral resource, a
// local feeding them) and the rest once the resources are applied; an instance whose
// configuration is not yet known is not opened and reads as unknown. Renewal happens in the
// background when the provider's RenewAt passes; every opened instance is closed when the
// run ends, failed or not. Nothing of them is stored: their values live in the run's memory.

// ephemeralCloseTimeout bounds the Close calls at the end of a run.
const ephemeralCloseTimeout = 30 * time.Second

// ephemerals are the ephemeral resource instances of one run or preview.
type ephemerals struct {
	ctx  context.Context
	tmpl *template.Stack
	ps   *providerSet
	sc   template.Scope

	mu     sync.Mutex
	inst   map[string]*ephemeralInstance
	closed bool
}

type ephemeralInstance struct {
	once sync.Once
	val  cty.Value
	err  error

	mu      sync.Mutex // private and renewAt: the renewer changes them
	p       provider.EphemeralProvider
	typ     string
	private []byte
	renewAt time.Time
	opened  bool
	stop    chan struct{}
	done    chan struct{}
}

// attachEphemerals makes sc open the ephemeral resources of tmpl with the providers of ps.
func attachEphemerals(ctx context.Context, sc *scope, tmpl *template.Stack, ps *providerSet) {
	if sc == nil || tmpl == nil || len(tmpl.Ephemerals) == 0 {
		return
	}
	sc.eph = &ephemerals{ctx: ctx, tmpl: tmpl, ps: ps, sc: sc, inst: map[string]*ephemeralInstance{}}
}

// Ephemeral implements tflang.EphemeralScope.
func (s *scope) Ephemeral(name string) (cty.Value, error) {
	if s.eph == nil {
		return cty.DynamicVal, nil
	}
	return s.eph.value(name)
}

// value opens instance name the first time and returns its value.
func (es *ephemerals) value(name string) (cty.Value, error) {
	res := es.tmpl.Ephemeral(name)
	if res == nil {
		return cty.NilVal, fmt.Errorf("there is no ephemeral resource %s", name)
	}
	es.mu.Lock()
	if es.closed {
		es.mu.Unlock()
		return cty.NilVal, errors.New("the run's ephemeral resources are closed")
	}
	in, ok := es.inst[name]
	if !ok {
		in = &ephemeralInstance{typ: res.Type}
		es.inst[name] = in
	}
	es.mu.Unlock()
	in.once.Do(func() { in.val, in.err = es.open(res, in) })
	return in.val, in.err
}

func (es *ephemerals) open(res *template.Resource, in *ephemeralInstance) (cty.Value, error) {
	ctx := es.ctx
	p, err := es.ps.configured(ctx, es.sc, res.Type, res.Provider)
	if err != nil {
		return cty.NilVal, err
	}
	ep, ok := p.(provider.EphemeralProvider)
	if !ok {
		return cty.NilVal, fmt.Errorf("provider %s has no ephemeral resources", res.Provider)
	}
	if ds := template.CheckAll(res.Preconditions, es.sc, cty.NilVal); ds.HasErrors() {
		return cty.NilVal, errors.New(reasonOf(ds.Err()))
	}
	cfg, ds := evalBody(ctx, p, provider.SchemaRequest{Kind: provider.SchemaEphemeral, Type: res.Type}, res.Properties, es.sc)
	if ds.HasErrors() {
		return cty.NilVal, errors.New(reasonOf(ds.Err()))
	}
	if !cfg.IsWhollyKnown() { // as terraform: not opened, its value unknown until it can be
		return cty.DynamicVal, nil
	}
	resp, err := ep.OpenEphemeral(ctx, provider.EphemeralRequest{Type: res.Type, Config: cfg})
	if err != nil {
		return cty.NilVal, err
	}
	if resp.Diagnostics.HasErrors() {
		return cty.NilVal, errors.New(reasonOf(resp.Diagnostics.Err()))
	}
	in.mu.Lock()
	in.p, in.private, in.renewAt, in.opened = ep, resp.Private, resp.RenewAt, true
	in.stop, in.done = make(chan struct{}), make(chan struct{})
	in.mu.Unlock()
	go in.renew(ctx)
	if ds := template.CheckAll(res.Postconditions, es.sc, resp.Result); ds.HasErrors() {
		return cty.NilVal, errors.New(reasonOf(ds.Err()))
	}
	return resp.Result, nil
}

// renew renews the instance whenever its RenewAt passes, until it is closed or the run ends.
func (in *ephemeralInstance) renew(ctx context.Context) {
	defer close(in.done)
	for {
		in.mu.Lock()
		at := in.renewAt
		in.mu.Unlock()
		if at.IsZero() {
			<-in.stop
			return
		}
		t := time.NewTimer(time.Until(at))
		select {
		case <-in.stop:
			t.Stop()
			return
		case <-ctx.Done():
			t.Stop()
			<-in.stop
			return
		case <-t.C:
		}
		in.mu.Lock()
		req := provider.RenewEphemeralRequest{Type: in.typ, Private: in.private}
		in.mu.Unlock()
		resp, err := in.p.RenewEphemeral(ctx, req)
		in.mu.Lock()
		if err != nil || resp.Diagnostics.HasErrors() {
			in.renewAt = time.Time{} // the provider's error stands until the run ends; Close still runs
		} else {
			if resp.Private != nil {
				in.private = resp.Private
			}
			in.renewAt = resp.RenewAt
		}
		in.mu.Unlock()
	}
}

// openAll opens the instances nothing has evaluated yet, as terraform opens every ephemeral
// resource of the configuration; the first failure is returned.
func (es *ephemerals) openAll() error {
	if es == nil {
		return nil
	}
	var errs []error
	for _, r := range es.tmpl.Ephemerals {
		if _, err := es.value(r.Name); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.Name, err))
		}
	}
	return errors.Join(errs...)
}

// close closes every opened instance (the run ended, whatever its outcome).
func (es *ephemerals) close() diag.Diagnostics {
	if es == nil {
		return nil
	}
	es.mu.Lock()
	es.closed = true
	names := make([]string, 0, len(es.inst))
	for n := range es.inst {
		names = append(names, n)
	}
	es.mu.Unlock()
	sort.Strings(names)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(es.ctx), ephemeralCloseTimeout)
	defer cancel()
	var ds diag.Diagnostics
	for _, n := range names {
		in := es.inst[n]
		in.mu.Lock()
		opened := in.opened
		in.opened = false
		in.mu.Unlock()
		if !opened {
			continue
		}
		close(in.stop)
		<-in.done
		d, err := in.p.CloseEphemeral(ctx, provider.RenewEphemeralRequest{Type: in.typ, Private: in.private})
		if err != nil {
			d = d.Append(diag.Errorf(diag.Range{}, n, "cannot close %s: %s", n, err))
		}
		ds = ds.Append(d)
	}
	return ds
}

// checkEphemerals validates every ephemeral resource's configuration with its provider
// (ValidateEphemeralResourceConfig), as far as it is known.
func checkEphemerals(ctx context.Context, st *template.Stack, ps *providerSet) diag.Diagnostics {
	var diags diag.Diagnostics
	sc := unknownScope{ctx, st}
	for _, r := range st.Ephemerals {
		p, err := ps.lookup(r.Type, r.Provider)
		if err != nil {
			diags = diags.Append(diag.Errorf(r.TypeRange, r.Name, "%s", err.Error()))
			continue
		}
		ep, ok := p.(provider.EphemeralProvider)
		if !ok {
			diags = diags.Append(diag.Errorf(r.TypeRange, r.Name, "provider %s has no ephemeral resources", r.Provider))
			continue
		}
		cfg, ds := evalBody(ctx, p, provider.SchemaRequest{Kind: provider.SchemaEphemeral, Type: r.Type}, r.Properties, sc)
		if ds.HasErrors() {
			if len(ds) > 0 && ds[0].Summary == "Invalid resource type" {
				ds[0].Summary = "Invalid ephemeral resource type"
			}
			diags = diags.Append(locate(ds, r, r.Name))
			continue
		}
		vds, err := ep.ValidateEphemeral(ctx, provider.EphemeralRequest{Type: r.Type, Config: cfg})
		if err != nil {
			diags = diags.Append(diag.Errorf(r.Range, r.Name, "cannot validate %s: %s", r.Name, err))
			continue
		}
		diags = diags.Append(locate(vds, r, r.Name))
	}
	// Root outputs holding ephemeral values, reported with the resources' errors as
	// terraform's validate does (the other output checks wait for a configuration without).
	if len(st.Ephemerals) > 0 || hasEphemeralParameter(st) {
		for _, o := range st.Outputs {
			_, ds := o.Value.Eval(sc)
			for _, d := range ds {
				if d.Summary == "Ephemeral value not allowed" {
					diags = diags.Append(d)
				}
			}
		}
	}
	return diags
}

func hasEphemeralParameter(st *template.Stack) bool {
	for _, p := range st.Parameters {
		if p.Ephemeral {
			return true
		}
	}
	return false
}

// storedRequest is req as cairn may store it (with the operation, to resume it, and with the
// stack, to delete it): without the values of st's ephemeral variables, wherever they were
// given (-var, TF_VAR_, a .tfvars file of the configuration). It also returns their names.
func storedRequest(req api.DeployRequest, st *template.Stack) (api.DeployRequest, []string) {
	var names []string
	for _, p := range st.Parameters {
		if p.Ephemeral {
			names = append(names, p.Name)
		}
	}
	if len(names) == 0 {
		return req, nil
	}
	req.Parameters = withoutKeys(req.Parameters, names)
	req.Env = withoutKeys(req.Env, names)
	files := make(map[string]string, len(req.Files))
	for name, text := range req.Files {
		switch {
		case strings.HasSuffix(name, ".tfvars"):
			text = stripHCLVars(name, text, names)
		case strings.HasSuffix(name, ".tfvars.json"):
			text = stripJSONVars(text, names)
		}
		files[name] = text
	}
	req.Files = files
	return req, names
}

func withoutKeys(m map[string]string, keys []string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

// stripHCLVars removes the definitions of names from a .tfvars file; a file that does not
// parse (it failed the load already) is emptied rather than kept with a value in it.
func stripHCLVars(name, text string, names []string) string {
	f, ds := hclwrite.ParseConfig([]byte(text), name, hcl.InitialPos)
	if ds.HasErrors() {
		return ""
	}
	for _, n := range names {
		f.Body().RemoveAttribute(n)
	}
	return string(f.Bytes())
}

func stripJSONVars(text string, names []string) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		return ""
	}
	for _, n := range names {
		delete(m, n)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return ""
	}
	return string(b)
}

// ephemeralGone is why a resumed run cannot go on: the values of its ephemeral variables
// were never stored, and only a new deploy can supply them. "" when it can.
func (r *run) ephemeralGone() string {
	if len(r.req.EphemeralVars) == 0 || r.handedOff {
		return ""
	}
	return fmt.Sprintf("The operation was interrupted and cannot resume: the values of ephemeral variables (%s) are never stored. Deploy again, supplying them.",
		strings.Join(r.req.EphemeralVars, ", "))
}
