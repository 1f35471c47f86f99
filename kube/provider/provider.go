// Package provider is cairn's Kubernetes provider: Kubernetes objects (CRDs and objects of
// their types, or any other kind) as stack resources. It is a Terraform plugin (protocol 6),
// served by the cairn-kube binary when cairn or terraform launches it, so that every dialect
// reaches it through one seam: the Terraform language as resource kubernetes_object, the
// CloudFormation dialect as Cairn::Kubernetes::Object (internal/provider/kubeobject maps it).
//
// Create and update are server-side applies with the field manager "cairn"; then the object
// is waited for until kstatus calls it Current (a Failed status, as from a Stalled or Failed
// condition, fails the step with the condition's message). Delete waits until the object is
// gone, finalizers and all.
package provider

import (
	"context"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// Address is the provider's source address in the Terraform language.
const Address = "registry.terraform.io/cairn-dev/kubernetes"

// Environment variables (internal/kubeproc sets the same names) through which cairn names its own kube API, the default endpoint of
// objects that name no kubeconfig: its URL, the file of its CA, the token to call it with and
// the user to act as (the stack's tenant, by impersonation).
const (
	EnvServer = "CAIRNKUBE_SERVER"
	EnvCA     = "CAIRNKUBE_CA_FILE"
	EnvToken  = "CAIRNKUBE_TOKEN"
	EnvAs     = "CAIRNKUBE_AS"
	// EnvGuard, when "1", refuses kubeconfig endpoints on loopback, link-local (cloud
	// metadata) and unspecified addresses: a tenant's stack on a shared server must not reach
	// the server's own neighbours through a kubeconfig of its making.
	EnvGuard = "CAIRNKUBE_GUARD"
)

// Serve serves the provider over the plugin protocol until terraform or cairn stops it.
func Serve(ctx context.Context) error {
	return providerserver.Serve(ctx, func() provider.Provider { return &kubeProvider{} },
		providerserver.ServeOpts{Address: Address, ProtocolVersion: 6})
}

type kubeProvider struct{}

func (p *kubeProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "kubernetes"
}

func (p *kubeProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{Description: "Kubernetes objects: cairn's own kube API by default, or any cluster a kubeconfig names."}
}

func (p *kubeProvider) Configure(_ context.Context, _ provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	d := &endpoints{
		defaultServer: os.Getenv(EnvServer), defaultCAFile: os.Getenv(EnvCA),
		defaultToken: os.Getenv(EnvToken), defaultAs: os.Getenv(EnvAs), guard: os.Getenv(EnvGuard) == "1",
		clients: map[string]*clients{},
	}
	resp.ResourceData = d
}

func (p *kubeProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{func() resource.Resource { return &objectResource{} }}
}

func (p *kubeProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }
