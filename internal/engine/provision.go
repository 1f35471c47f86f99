package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/builtin"
	"github.com/cairn-dev/cairn/internal/provisioner"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/tenant"
	"github.com/cairn-dev/cairn/internal/value"
)

// This file runs the Terraform language's provisioners and serves its built-in provider.
//
// A creation-time provisioner runs after its object is created (or replaced), never after an
// update. The create's journal entry stores the object tainted ("provisionPending"); the
// "provision/<name>" step then runs the provisioners and stores it complete. A run resumed
// after cairn died anywhere in between finds the object tainted, as terraform leaves an
// object whose provisioners did not finish, and the next deploy replaces it. A destroy-time
// provisioner runs before its object is deleted, with self the object's last state; a delete
// resumed after a restart runs them again (the object still exists).

// provisionPending is the reason a created object stays tainted until its creation-time
// provisioners have run.
const provisionPending = "Creation-time provisioners have not finished: the object is tainted until they do."

// provisionInterrupted is the reason of an object whose provisioners were running when cairn
// stopped.
const provisionInterrupted = "cairn stopped while the creation-time provisioners ran: the object is tainted, and the next deploy replaces it."

// Events of a provisioner: its start, each line it prints, a failure that on_failure =
// continue ignores.
const (
	statusProvisioning      = "PROVISIONING"
	statusProvisionerOutput = "PROVISIONER_OUTPUT"
	statusProvisionerFailed = "PROVISIONER_FAILED"
)

// Output lines of one provisioner kept as events; the rest is counted, not stored.
const (
	maxOutputLines = 1000
	maxLineBytes   = 4096
)

// builtinPlugin serves terraform.io/builtin/terraform in process.
type builtinPlugin struct{}

func (builtinPlugin) Version() string                       { return builtin.Version }
func (builtinPlugin) Open(string, string) provider.Provider { return builtin.New() }

// splitBuiltin separates the requirements plugins serve from the built-in provider's.
func splitBuiltin(reqs []*template.ProviderRequirement) ([]*template.ProviderRequirement, map[string]Plugin) {
	var out []*template.ProviderRequirement
	builtins := map[string]Plugin{}
	for _, r := range reqs {
		if r.Source == template.BuiltinProvider {
			builtins[r.Source] = builtinPlugin{}
			continue
		}
		out = append(out, r)
	}
	return out, builtins
}

// withBuiltins adds the built-in packages to resolved ones.
func withBuiltins(pkgs, builtins map[string]Plugin) map[string]Plugin {
	if pkgs == nil {
		pkgs = map[string]Plugin{}
	}
	for src, p := range builtins {
		pkgs[src] = p
	}
	return pkgs
}

// mayRunCode reports whether the request of ctx may run commands on this server: as its
// operation's request was answered (tenant.RunCodeFrom), else as RunCode says.
func (e *Engine) mayRunCode(ctx context.Context) bool {
	if ok, known := tenant.RunCodeFrom(ctx); known {
		return ok
	}
	return e.o.RunCode == nil || e.o.RunCode(ctx)
}

// codeRight is what an operation started by the request of ctx records of its right to run
// code.
func (e *Engine) codeRight(ctx context.Context) *bool {
	ok := e.mayRunCode(ctx)
	return &ok
}

// withCodeRight returns ctx with the right to run code that the operation's stored request
// (opRequest JSON) records, if it records one.
func withCodeRight(ctx context.Context, request []byte) context.Context {
	var rec struct {
		Code *bool `json:"code"`
	}
	if json.Unmarshal(request, &rec) == nil && rec.Code != nil {
		return tenant.WithRunCode(ctx, *rec.Code)
	}
	return ctx
}

// codeRefused is why a tenant's provisioner does not run: local-exec runs a command on the
// server, file and remote-exec open SSH connections from it (network egress, and file reads
// the server's files); all are the server's own user acting for the tenant.
func codeRefused(t string) string {
	return fmt.Sprintf("a provisioner runs a command on the cairn server (local-exec) or opens an SSH connection from it and uploads "+
		"the server's files (file, remote-exec), as the server's own user; this server lets only its admin run them "+
		"(start it with --allow-tenant-code to let every token), and this request acts for tenant %q", t)
}

// checkProvisioners refuses, before anything runs, the provisioners of a tenant that may not
// run code on the server.
func (e *Engine) checkProvisioners(ctx context.Context, st *template.Stack) diag.Diagnostics {
	if st == nil || e.mayRunCode(ctx) {
		return nil
	}
	var ds diag.Diagnostics
	for _, res := range st.Resources {
		for _, p := range res.Provisioners {
			ds = append(ds, diag.Diagnostic{Severity: diag.Error, Summary: "Provisioner not allowed",
				Detail: codeRefused(tenant.From(ctx)) + ".", Range: p.TypeRange})
			break
		}
	}
	return ds
}

// taintUntilProvisioned marks a row just created for res tainted when res has creation-time
// provisioners still to run; it reports whether it did.
func (r *run) taintUntilProvisioned(row *state.Resource, res *template.Resource) bool {
	if len(template.ProvisionersOf(res, template.WhenCreate)) == 0 {
		return false
	}
	row.Status, row.StatusReason = "CREATE_FAILED", provisionPending
	return true
}

// provision runs the creation-time provisioners of res, whose new object row the create
// step stored tainted, and stores it with status (CREATE_COMPLETE or UPDATE_COMPLETE) once
// they succeed; warning is the reason its final event gives.
func (r *run) provision(ctx context.Context, sc *scope, res *template.Resource, row state.Resource, status, warning string) error {
	key := "provision/" + res.Name
	token, resumed, err := r.begin(ctx, key)
	if err != nil {
		return err
	}
	if resumed {
		return r.provisionFailed(ctx, sc, key, token, row, provisionInterrupted)
	}
	self, err := value.Unmarshal(row.Outputs)
	if err != nil {
		return fmt.Errorf("cannot decode state of %s: %w", res.Name, err)
	}
	fail, err := r.runProvisioners(ctx, sc, res, template.WhenCreate, row.ID, self)
	if err != nil {
		return err
	}
	if fail != "" {
		return r.provisionFailed(ctx, sc, key, token, row, fail)
	}
	row.Status, row.StatusReason = status, ""
	if err := r.end(ctx, key, token, false, detail{Kind: "provision", After: imageOf(row)}, state.Write{Put: &row}); err != nil {
		return err
	}
	if err := sc.setRow(row); err != nil {
		return err
	}
	return r.event(ctx, res.Name, row.ID, res.Type, status, warning)
}

// provisionFailed stores a provisioned object tainted, with the reason, and fails its step.
func (r *run) provisionFailed(ctx context.Context, sc *scope, key, token string, row state.Resource, fail string) error {
	row.Status, row.StatusReason = "CREATE_FAILED", fail
	if err := r.end(ctx, key, token, true, detail{Kind: "provision", After: imageOf(row)}, state.Write{Put: &row}); err != nil {
		return err
	}
	if err := sc.setRow(row); err != nil {
		return err
	}
	if err := r.event(ctx, row.Name, row.ID, row.Type, "CREATE_FAILED", fail); err != nil {
		return err
	}
	return &stepFailed{row.Name, fail}
}

// resumeProvision settles, for a run resumed after a restart, a resource whose create ended
// with its provisioners pending: it is tainted and its step fails. done is false when
// there is nothing of the kind and the step goes on as usual.
func (r *run) resumeProvision(ctx context.Context, sc *scope, res *template.Resource) (done bool, err error) {
	if len(template.ProvisionersOf(res, template.WhenCreate)) == 0 {
		return false, nil
	}
	key := "provision/" + res.Name
	if je, ok := r.ended(key); ok {
		row, err := r.e.store.GetResource(ctx, r.op.Stack, res.Name)
		if err != nil {
			return true, fmt.Errorf("cannot read resource %s: %w", res.Name, err)
		}
		r.markChanged(res.Name)
		if err := sc.setRow(row); err != nil {
			return true, err
		}
		if je.Failed {
			return true, &stepFailed{res.Name, row.StatusReason}
		}
		return true, nil
	}
	_, created := r.ended("create/" + res.Name)
	_, replaced := r.ended("update/" + res.Name)
	if !created && !replaced {
		return false, nil
	}
	row, err := r.e.store.GetResource(ctx, r.op.Stack, res.Name)
	if err != nil {
		return true, fmt.Errorf("cannot read resource %s: %w", res.Name, err)
	}
	if row.Status != "CREATE_FAILED" || row.StatusReason != provisionPending {
		return false, nil // an update in place, or a create that failed: nothing was to run
	}
	r.markChanged(res.Name)
	token, _, err := r.begin(ctx, key)
	if err != nil {
		return true, err
	}
	return true, r.provisionFailed(ctx, sc, key, token, row, provisionInterrupted)
}

// deprovision runs the destroy-time provisioners of the object that delete step key
// deletes, before it is deleted. As in terraform, they run for a destroyed or replaced
// object, not for a tainted one, the old copy of a create_before_destroy replacement (a
// cleanup step) or a resource no longer in the configuration. fail is why the object must
// not be deleted.
func (r *run) deprovision(ctx context.Context, key string, t target) (fail string, err error) {
	kind, _, _ := strings.Cut(key, "/")
	if r.tmpl == nil || (kind != "delete" && kind != "replace") {
		return "", nil
	}
	res := r.tmpl.Resource(t.name)
	if len(template.ProvisionersOf(res, template.WhenDestroy)) == 0 {
		return "", nil
	}
	if row, ok := r.prior[t.name]; ok && row.ID == t.id && row.Status == "CREATE_FAILED" {
		return "", nil
	}
	self, err := value.Unmarshal(t.outputs)
	if err != nil {
		return "", fmt.Errorf("cannot decode state of %s: %w", t.name, err)
	}
	return r.runProvisioners(ctx, r.sc, res, template.WhenDestroy, t.id, self)
}

// runProvisioners runs the provisioners of res that run when, in order, for the object id
// whose state is self. fail is the first failure not ignored by on_failure = continue; err
// is errShutdown when cairn is stopping.
func (r *run) runProvisioners(ctx context.Context, sc template.Scope, res *template.Resource, when template.ProvisionerWhen, id string, self cty.Value) (fail string, err error) {
	for _, p := range template.ProvisionersOf(res, when) {
		if !r.e.mayRunCode(ctx) {
			return p.TypeRange.String() + ": " + codeRefused(tenant.From(ctx)), nil
		}
		spec, ok := provisioner.Spec(p.Type)
		if !ok {
			return fmt.Sprintf("%s: cairn cannot run the %q provisioner", p.TypeRange, p.Type), nil
		}
		cfg, diags := p.Config.EvalSelf(sc, self, spec)
		if diags.HasErrors() {
			return reasonOf(diags.Err()), nil
		}
		if !cfg.IsWhollyKnown() {
			return fmt.Sprintf("%s: the %s provisioner's configuration is not known after the resource was applied", p.Range, p.Type), nil
		}
		plain, pvm := cfg.UnmarkDeepWithPaths()
		secrets, args := secretsOf(plain, pvm)
		conn, connSecrets, fail := r.connection(sc, p, self)
		if fail != "" {
			return fail, nil
		}
		hide := newRedactor(append(secrets, connSecrets...))
		if err := r.event(ctx, res.Name, id, res.Type, statusProvisioning, fmt.Sprintf("Provisioning with '%s'...", p.Type)); err != nil {
			return "", err
		}
		dir, err := r.workDir()
		if err != nil {
			return "", err
		}
		out := &outputEvents{r: r, ctx: ctx, res: res, id: id, typ: p.Type, secret: len(pvm) > 0, hide: hide}
		runErr := provisioner.Run(ctx, provisioner.Request{Type: p.Type, Config: plain, Connection: conn, Dir: dir, Output: out.line,
			Sensitive: args})
		if err := out.flush(); err != nil {
			return "", err
		}
		if r.e.runCtx.Err() != nil {
			return "", errShutdown
		}
		if runErr == nil {
			continue
		}
		msg := p.Range.String() + ": " + hide.Replace(strings.TrimSpace(runErr.Error()))
		if ctx.Err() != nil { // cancelled, timed out or taken over: what follows must not run either
			fail, err := r.callFailure(ctx, runErr, nil)
			if err != nil {
				return "", err
			}
			return p.Range.String() + ": " + fail, nil
		}
		if p.Continue {
			if err := r.event(ctx, res.Name, id, res.Type, statusProvisionerFailed, msg+" (on_failure = continue: going on)"); err != nil {
				return "", err
			}
			continue
		}
		return msg, nil
	}
	return "", nil
}

// connection evaluates the connection block of p (null when it has none); fail is why it
// cannot be used. Secrets in it (a password) are not marks the provisioner sees, and do not
// suppress its output, as in terraform; they are returned (secrets) to be cut out of what is
// stored, should a message or output line repeat one (a sensitive host).
func (r *run) connection(sc template.Scope, p *template.Provisioner, self cty.Value) (conn cty.Value, secrets []string, fail string) {
	if p.Connection == nil {
		return cty.NullVal(cty.DynamicPseudoType), nil, ""
	}
	v, diags := p.Connection.EvalSelf(sc, self, provisioner.ConnectionSpec)
	if diags.HasErrors() {
		return cty.NilVal, nil, reasonOf(diags.Err())
	}
	if !v.IsWhollyKnown() {
		return cty.NilVal, nil, fmt.Sprintf("%s: the %s provisioner's connection is not known after the resource was applied", p.Range, p.Type)
	}
	v, pvm := v.UnmarkDeepWithPaths()
	secrets, _ = secretsOf(v, pvm)
	return v, secrets, ""
}

// secretsOf lists the strings in the parts of plain that pvm marked (sensitive or
// ephemeral), and the top-level arguments holding them.
func secretsOf(plain cty.Value, pvm []cty.PathValueMarks) (secrets, args []string) {
	seen := map[string]bool{}
	for _, pm := range pvm {
		if len(pm.Path) > 0 {
			if step, ok := pm.Path[0].(cty.GetAttrStep); ok && !seen["arg:"+step.Name] {
				seen["arg:"+step.Name] = true
				args = append(args, step.Name)
			}
		}
		v, err := pm.Path.Apply(plain)
		if err != nil {
			continue
		}
		_ = cty.Walk(v, func(_ cty.Path, x cty.Value) (bool, error) {
			if x.IsKnown() && !x.IsNull() && x.Type() == cty.String && !seen[x.AsString()] {
				seen[x.AsString()] = true
				secrets = append(secrets, x.AsString())
			}
			return true, nil
		})
	}
	return secrets, args
}

// newRedactor replaces each of secrets, as given or as a quoted string shows it, with
// "(sensitive value)" in one pass, the longest first.
func newRedactor(secrets []string) *strings.Replacer {
	var forms []string
	for _, s := range secrets {
		if s == "" {
			continue
		}
		forms = append(forms, s)
		if q := strconv.Quote(s); q[1:len(q)-1] != s {
			forms = append(forms, q[1:len(q)-1])
		}
	}
	sort.SliceStable(forms, func(i, j int) bool { return len(forms[i]) > len(forms[j]) })
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, provisioner.SensitiveValue)
	}
	return strings.NewReplacer(pairs...)
}

// outputEvents turns a provisioner's output into events, as terraform prints it
// ("(local-exec): line"); a command whose configuration holds secrets shows none.
type outputEvents struct {
	r       *run
	ctx     context.Context
	res     *template.Resource
	id, typ string
	secret  bool
	hide    *strings.Replacer // the connection's secrets, should a line show one

	mu    sync.Mutex // a command's output reader may outlive it (a child holding the pipe)
	lines int
	err   error
}

func (o *outputEvents) line(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lines++
	switch {
	case o.err != nil || o.lines > maxOutputLines:
		return
	case o.secret:
		if o.lines > 1 {
			return
		}
		s = "(output suppressed due to sensitive value in config)"
	default:
		if s = o.hide.Replace(s); len(s) > maxLineBytes {
			s = s[:maxLineBytes] + "..."
		}
	}
	o.err = o.r.event(o.ctx, o.res.Name, o.id, o.res.Type, statusProvisionerOutput, "("+o.typ+"): "+s)
}

// flush reports output past the cap, and returns the first error storing an event.
func (o *outputEvents) flush() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err == nil && !o.secret && o.lines > maxOutputLines {
		o.err = o.r.event(o.ctx, o.res.Name, o.id, o.res.Type, statusProvisionerOutput,
			fmt.Sprintf("(%s): ... %d more lines not shown", o.typ, o.lines-maxOutputLines))
	}
	return o.err
}

// workDir is the provisioners' working directory: the run's (see runDir), the one its
// provider processes start in, as terraform runs both in its working directory.
func (r *run) workDir() (string, error) {
	if r.ps == nil {
		return "", errors.New("the run has no working directory")
	}
	return r.ps.workDir()
}

// deleteFailed ends the delete step key of t as failed before the provider was called (its
// destroy-time provisioner failed): the object stays, as terraform leaves it.
func (r *run) deleteFailed(ctx context.Context, key, token string, t target, fail string) error {
	var writes []state.Write
	if t.removeRow {
		if row, err := r.e.store.GetResource(ctx, r.op.Stack, t.name); err == nil {
			row.Status, row.StatusReason = "DELETE_FAILED", fail
			writes = append(writes, state.Write{Put: &row})
		}
	}
	if err := r.end(ctx, key, token, true, detail{Kind: "delete", Before: &image{ID: t.id}}, writes...); err != nil {
		return err
	}
	if err := r.event(ctx, t.name, t.id, t.typ, "DELETE_FAILED", fail); err != nil {
		return err
	}
	return &stepFailed{t.name, fail}
}
