package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/addr"
	"github.com/cairn-dev/cairn/internal/kubesync"
	"github.com/cairn-dev/cairn/internal/kubetypes"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/server"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/tenant"
)

// kubeClient is a client of this server's kube API with its own token (the admin).
func (a *App) kubeClient() (*kubesync.Client, error) {
	token := a.token
	if token == "" {
		token = "no-auth"
	}
	return kubesync.NewClient(a.kube.URL(), a.kube.CertFile(), token)
}

// kubeEnable makes a CRD of each asked resource type of a Terraform provider, from its
// schema (POST /v1/kube/enable).
func (a *App) kubeEnable(ctx context.Context, req api.KubeEnableRequest) (api.KubeEnableResponse, error) {
	src, err := addr.ParseProvider(req.Provider)
	if err != nil {
		return api.KubeEnableResponse{}, &server.InvalidError{Msg: fmt.Sprintf("invalid provider %q: %v", req.Provider, err)}
	}
	ctx = tenant.With(ctx, tenant.Default)
	pkgs, _, diags := a.plugins.Resolve(ctx, []*template.ProviderRequirement{{Name: src.Type, Source: src.String(), Versions: req.Version}}, nil, false)
	if diags.HasErrors() {
		return api.KubeEnableResponse{}, &server.InvalidError{Msg: diags.Err().Error()}
	}
	pkg, ok := pkgs[src.String()]
	if !ok {
		return api.KubeEnableResponse{}, &server.InvalidError{Msg: fmt.Sprintf("provider %s is not installed where cairn looks for providers", src.ForDisplay())}
	}
	p := pkg.Open(src.Type, "")
	defer p.Close()
	kc, err := a.kubeClient()
	if err != nil {
		return api.KubeEnableResponse{}, err
	}
	resp := api.KubeEnableResponse{Provider: src.String(), Version: pkg.Version()}
	for _, typ := range req.Types {
		sch, err := p.Schema(ctx, provider.SchemaRequest{Kind: provider.SchemaResource, Type: typ})
		if errors.Is(err, provider.ErrUnknownType) {
			return resp, &server.InvalidError{Msg: fmt.Sprintf("provider %s %s has no resource type %q", src.ForDisplay(), pkg.Version(), typ)}
		}
		if err != nil {
			return resp, &server.InvalidError{Msg: fmt.Sprintf("cannot read the schema of %s: %v", typ, err)}
		}
		t := kubetypes.TypeOf(src, pkg.Version(), typ)
		if err := kc.Apply(ctx, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+t.CRDName(), kubetypes.CRD(t, sch)); err != nil {
			return resp, &server.InvalidError{Msg: fmt.Sprintf("cannot make the CRD of %s: %v", typ, err)}
		}
		resp.CRDs = append(resp.CRDs, t.CRDName())
	}
	return resp, nil
}

// startKubeSync runs the reconciler of enabled types until shutdown.
func (a *App) startKubeSync() error {
	kc, err := a.kubeClient()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(tenant.With(context.Background(), tenant.Default))
	a.stopSync = cancel
	r := &kubesync.Reconciler{Kube: kc, Stacks: engineStacks{a}, Log: a.log}
	go r.Run(ctx)
	return nil
}

// engineStacks deploys the reconciler's stacks through the engine, as tenant default.
type engineStacks struct{ a *App }

func (s engineStacks) Deploy(ctx context.Context, stack string, files map[string]string) (map[string]map[string]any, error) {
	op, err := s.a.eng.Deploy(ctx, stack, api.DeployRequest{Files: files})
	if err != nil {
		return nil, err
	}
	if op, err = s.wait(ctx, op); err != nil {
		return nil, err
	}
	st, err := s.a.eng.Stack(ctx, stack)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]any{}
	for _, r := range st.Resources {
		attrs, _ := r.Attributes.(map[string]any)
		clean := map[string]any{}
		for k, v := range attrs {
			if v != api.SensitiveMarker {
				clean[k] = v
			}
		}
		out[r.LogicalID] = clean
	}
	return out, nil
}

func (s engineStacks) Delete(ctx context.Context, stack string) error {
	if _, err := s.a.eng.StackBrief(ctx, stack); err != nil {
		return nil // no such stack
	}
	op, err := s.a.eng.Delete(ctx, stack, api.DeleteRequest{})
	if err != nil {
		return err
	}
	_, err = s.wait(ctx, op)
	return err
}

// wait waits for op and turns a failed one into its reason.
func (s engineStacks) wait(ctx context.Context, op api.Operation) (api.Operation, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	op, err := s.a.eng.Wait(ctx, op.ID)
	if err != nil {
		return op, err
	}
	if op.Status != "succeeded" {
		return op, fmt.Errorf("%s of stack %s %s: %s", op.Kind, op.Stack, op.Status, op.StatusReason)
	}
	return op, nil
}
