package app

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/addr"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/kubeproc"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/kubeobject"
	"github.com/cairn-dev/cairn/internal/provider/tfplugin"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/template/pulumiyaml"
	"github.com/cairn-dev/cairn/internal/tenant"
)

// startKube starts cairn's Kubernetes API when cfg asks for it. It keeps its store and
// certificate in Dir/kube and checks tokens with this app's own API.
func (a *App) startKube(ctx context.Context, cfg Config) error {
	if cfg.KubeListen == "" {
		return nil
	}
	dir, err := filepath.Abs(filepath.Join(cfg.Dir, "kube"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create the kube API's directory: %w", err)
	}
	a.kubeHosts = cfg.KubeHosts
	a.kube, err = kubeproc.Start(ctx, kubeproc.Config{Binary: cfg.KubeBinary, Listen: cfg.KubeListen, Dir: dir,
		CairnURL: a.url, Hosts: cfg.KubeHosts, Logger: a.log, Database: withoutPoolParams(cfg.Database)})
	if err != nil {
		return fmt.Errorf("cannot serve the kube API: %w", err)
	}
	a.log.Info("the kube API is serving", "url", a.kube.URL())
	return a.startKubeSync() // kubeenable.go
}

// kubeEndpoint answers GET /v1/kube.
func (a *App) kubeEndpoint() (api.KubeEndpoint, error) {
	if a.kube == nil {
		return api.KubeEndpoint{}, fmt.Errorf("the kube API is not served")
	}
	ca, err := os.ReadFile(a.kube.CertFile())
	if err != nil {
		return api.KubeEndpoint{}, fmt.Errorf("cannot read the kube API's certificate: %w", err)
	}
	server := a.kube.URL()
	if len(a.kubeHosts) > 0 { // the name clients elsewhere reach it by
		if u, err := url.Parse(server); err == nil {
			server = "https://" + net.JoinHostPort(a.kubeHosts[0], u.Port())
		}
	}
	return api.KubeEndpoint{Server: server, CA: string(ca)}, nil
}

// KubeURL is where the kube API listens, "" when it is not served.
func (a *App) KubeURL() string {
	if a.kube == nil {
		return ""
	}
	return a.kube.URL()
}

// openKubePlugin starts (lazily) cairn's Kubernetes provider plugin (cairn-kube) for a
// tenant: objects that name no kubeconfig go to this server's kube API, as that tenant.
func (a *App) openKubePlugin(cfg Config, tenantName, dir string) (provider.Provider, error) {
	bin, err := kubeproc.FindBinary(cfg.KubeBinary)
	if err != nil {
		return nil, err
	}
	var env []string
	if a.kube != nil {
		// The plugin calls cairn's kube API as the tenant itself, with one of the tenant's own
		// tokens: the admin token never reaches a tenant's plugin (a kubeconfig's exec or
		// tokenFile could hand it on).
		token := a.token
		if tenantName != tenant.Default {
			token = tokenOf(cfg.Tenants, tenantName)
		}
		if token == "" && a.authn != nil && tenantName != tenant.Default {
			// A tenant of made tokens only (stored hashed): a token of this replica's, as a
			// deployer of the tenant, for as long as a run may last.
			token = a.authn.Issue(tenant.Caller{Tenant: tenantName, Subject: "kube-plugin", Role: tenant.Deployer}, 24*time.Hour)
		}
		if token == "" {
			token = "no-auth" // a server without auth takes any token; the kube API wants one
		}
		env = append(env, kubeproc.EnvServer+"="+a.kube.URL(), kubeproc.EnvCA+"="+a.kube.CertFile(), kubeproc.EnvToken+"="+token)
	}
	if tenantName != tenant.Default {
		// As internal/egress guards service tokens: no loopback or link-local endpoints, and a
		// kubeconfig may name no file, command or credential source on the server.
		env = append(env, kubeproc.EnvGuard+"=1")
	}
	return tfplugin.New(tfplugin.Config{Name: "kubernetes", Executable: bin, Dir: dir, Env: env, Logger: a.log}), nil
}

// KubeProviderSource is the Terraform-language source address of cairn's Kubernetes
// provider, which cairn serves itself (no registry, no lock file entry).
var KubeProviderSource = addr.Provider{Host: addr.DefaultRegistryHost, Namespace: "cairn-dev", Type: "kubernetes"}

// resolveKube takes the requirements of cairn's Kubernetes provider out of reqs into out.
func (p *plugins) resolveKube(ctx context.Context, reqs []*template.ProviderRequirement, out map[string]engine.Plugin) []*template.ProviderRequirement {
	var rest []*template.ProviderRequirement
	for _, r := range reqs {
		if src, err := addr.ParseProvider(r.Source); err == nil && src == KubeProviderSource {
			out[r.Source] = kubePlugin{open: p.kube, tenant: tenant.From(ctx)}
			continue
		}
		if pkg, ok := pulumiyaml.PackageOf(r.Source); ok && pkg == kubeobject.PulumiPackage {
			out[r.Source] = kubePlugin{open: p.kube, tenant: tenant.From(ctx), pulumi: true}
			continue
		}
		rest = append(rest, r)
	}
	return rest
}

// kubePlugin is cairn's Kubernetes provider for one tenant's operation: the plugin itself
// for the Terraform language, through kubeobject's renaming for Pulumi YAML.
type kubePlugin struct {
	open   func(tenant, dir string) (provider.Provider, error)
	tenant string
	pulumi bool
}

func (k kubePlugin) Version() string { return "0.1.0" }

func (k kubePlugin) Open(name, dir string) provider.Provider {
	if k.pulumi {
		return &kubeobject.Provider{Properties: kubeobject.Pulumi, Open: func(string) (provider.Provider, error) { return k.open(k.tenant, dir) }}
	}
	pl, err := k.open(k.tenant, dir)
	if err != nil {
		return failing{err: err}
	}
	return pl
}

// failing answers every call with err (cairn-kube could not be found).
type failing struct {
	provider.Unimplemented
	err error
}

func (f failing) Check(context.Context, provider.CheckRequest) (provider.CheckResponse, error) {
	return provider.CheckResponse{}, f.err
}
func (f failing) Diff(context.Context, provider.DiffRequest) (provider.DiffResponse, error) {
	return provider.DiffResponse{}, f.err
}
func (f failing) Create(context.Context, provider.CreateRequest) (provider.CreateResponse, error) {
	return provider.CreateResponse{}, f.err
}
func (f failing) Update(context.Context, provider.UpdateRequest) (provider.UpdateResponse, error) {
	return provider.UpdateResponse{}, f.err
}
func (f failing) Delete(context.Context, provider.DeleteRequest) (provider.DeleteResponse, error) {
	return provider.DeleteResponse{}, f.err
}
func (f failing) Schema(context.Context, provider.SchemaRequest) (provider.Schema, error) {
	return provider.Schema{}, f.err
}
func (f failing) Configure(context.Context, provider.ConfigureRequest) (provider.ConfigureResponse, error) {
	return provider.ConfigureResponse{}, f.err
}

// PackageSchema is the Pulumi package schema of cairn's Pulumi package (engine.SchemaPlugin).
func (k kubePlugin) PackageSchema(context.Context) ([]byte, error) {
	if !k.pulumi {
		return nil, fmt.Errorf("the Terraform provider cairn-dev/kubernetes has no Pulumi package schema")
	}
	return []byte(kubeobject.PulumiSchema), nil
}

// tokenOf is one of tenant's tokens (the first in sort order, so that it is stable), "" if
// it has none.
func tokenOf(tokens map[string]string, tenantName string) string {
	var mine []string
	for tok, t := range tokens {
		if t == tenantName {
			mine = append(mine, tok)
		}
	}
	sort.Strings(mine)
	if len(mine) == 0 {
		return ""
	}
	return mine[0]
}

// withoutPoolParams is a postgres:// URL without the pgxpool parameters (pool_max_conns, ...),
// which cairn-kube's drivers would send to the server as settings it does not know.
func withoutPoolParams(database string) string {
	u, err := url.Parse(database)
	if err != nil || u.Scheme == "" {
		return database
	}
	q := u.Query()
	for k := range q {
		if strings.HasPrefix(k, "pool_") {
			q.Del(k)
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}
