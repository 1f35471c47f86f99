package install

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	tfaddr "github.com/hashicorp/terraform-registry-address"
	svchost "github.com/hashicorp/terraform-svchost"
	"github.com/hashicorp/terraform-svchost/disco"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider/tfinstall"
)

// modulesService is the service of the module registry protocol.
const modulesService = "modules.v1"

// Registry speaks terraform's module registry protocol: service discovery
// (/.well-known/terraform.json, or the CLI configuration's host blocks), then the version
// list and the download location of a module package.
type Registry struct {
	disco  *disco.Disco
	client *http.Client
}

// NewRegistry returns a client whose discovery answers for hosts from services ("modules.v1"
// -> URL by host name), as terraform's CLI configuration host blocks do, and asks the
// network for every other host. transport nil means http.DefaultTransport.
func NewRegistry(services map[string]map[string]any, transport http.RoundTripper) (*Registry, error) {
	d := disco.New()
	if transport != nil {
		d.Transport = transport
	}
	for name, svcs := range services {
		h, err := svchost.ForComparison(name)
		if err != nil {
			return nil, fmt.Errorf("invalid host name %q in the CLI configuration: %w", name, err)
		}
		d.ForceHostServices(h, svcs)
	}
	return &Registry{disco: d, client: &http.Client{Transport: d.Transport, Timeout: 10 * time.Second}}, nil
}

// CLIRegistry is the registry client that terraform's CLI configuration (tfinstall.CLIConfigPath)
// describes: its host blocks' services.
func CLIRegistry() (*Registry, error) {
	services, err := hostServices(tfinstall.CLIConfigPath())
	if err != nil {
		return nil, err
	}
	return NewRegistry(services, nil)
}

// hostServices reads the host blocks of a CLI configuration file; a missing file has none.
func hostServices(file string) (map[string]map[string]any, error) {
	src, err := os.ReadFile(file)
	if file == "" || errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the CLI configuration: %w", err)
	}
	f, ds := hclparse.NewParser().ParseHCL(src, file)
	if ds.HasErrors() {
		return nil, fmt.Errorf("invalid CLI configuration %s: %s", file, ds.Error())
	}
	content, _, ds := f.Body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "host", LabelNames: []string{"name"}}}})
	if ds.HasErrors() {
		return nil, fmt.Errorf("invalid CLI configuration %s: %s", file, ds.Error())
	}
	out := map[string]map[string]any{}
	for _, b := range content.Blocks {
		attrs, ds := b.Body.JustAttributes()
		if ds.HasErrors() {
			return nil, fmt.Errorf("invalid CLI configuration %s: %s", file, ds.Error())
		}
		svcs := map[string]any{}
		if a, ok := attrs["services"]; ok {
			v, ds := a.Expr.Value(nil)
			if ds.HasErrors() || !(v.Type().IsObjectType() || v.Type().IsMapType()) || !v.IsWhollyKnown() || v.IsNull() {
				return nil, fmt.Errorf("invalid CLI configuration %s: host %q: services must be an object of service URLs", file, b.Labels[0])
			}
			for k, sv := range v.AsValueMap() {
				if sv.Type() == cty.String && !sv.IsNull() {
					svcs[k] = sv.AsString()
				}
			}
		}
		out[b.Labels[0]] = svcs
	}
	return out, nil
}

// errNotFound is a module the registry does not know.
var errNotFound = errors.New("module not found")

// service is the modules.v1 base URL of the package's host, ending in "/".
func (r *Registry) service(pkg tfaddr.ModulePackage) (*url.URL, error) {
	u, err := r.disco.DiscoverServiceURL(pkg.Host, modulesService)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u, nil
}

// get sends a GET to u and returns the response with its body read (at most 1 MiB).
func (r *Registry) get(ctx context.Context, u *url.URL) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("X-Terraform-Version", "1.11.0")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp, body, err
}

// Versions lists the versions the registry has of pkg, as written there.
func (r *Registry) Versions(ctx context.Context, pkg tfaddr.ModulePackage) ([]string, error) {
	base, err := r.service(pkg)
	if err != nil {
		return nil, err
	}
	u := base.ResolveReference(&url.URL{Path: path.Join(pkg.ForRegistryProtocol(), "versions")})
	resp, body, err := r.get(ctx, u)
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return nil, errNotFound
	default:
		return nil, fmt.Errorf("error looking up module versions: %s", resp.Status)
	}
	var doc struct {
		Modules []struct {
			Versions []struct {
				Version string `json:"version"`
			} `json:"versions"`
		} `json:"modules"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("invalid version list from %s: %w", u, err)
	}
	if len(doc.Modules) == 0 {
		return nil, fmt.Errorf("invalid version list from %s: no modules", u)
	}
	var out []string
	for _, v := range doc.Modules[0].Versions {
		out = append(out, v.Version)
	}
	return out, nil
}

// Location is where version of pkg is downloaded from: the X-Terraform-Get of the download
// endpoint (204, or 200 with the header), a relative one resolved against the endpoint.
func (r *Registry) Location(ctx context.Context, pkg tfaddr.ModulePackage, version string) (string, error) {
	base, err := r.service(pkg)
	if err != nil {
		return "", err
	}
	u := base.ResolveReference(&url.URL{Path: path.Join(pkg.ForRegistryProtocol(), version, "download")})
	resp, body, err := r.get(ctx, u)
	if err != nil {
		return "", err
	}
	switch resp.StatusCode {
	case http.StatusOK, http.StatusNoContent:
	case http.StatusNotFound:
		return "", fmt.Errorf("module %s version %s not found", pkg, version)
	default:
		return "", fmt.Errorf("error getting the download location of %s %s: %s %s", pkg, version, resp.Status, strings.TrimSpace(string(body)))
	}
	loc := resp.Header.Get("X-Terraform-Get")
	if loc == "" {
		return "", fmt.Errorf("the registry gave no download location (X-Terraform-Get) for %s %s", pkg, version)
	}
	if strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "./") || strings.HasPrefix(loc, "../") {
		rel, err := url.Parse(loc)
		if err != nil {
			return "", fmt.Errorf("invalid relative download location %q for %s: %w", loc, pkg, err)
		}
		loc = u.ResolveReference(rel).String()
	}
	return loc, nil
}
