// Package server is cairn's Kubernetes API for custom resources: the real
// k8s.io/apiextensions-apiserver on k8s.io/apiserver, standalone (no kube-apiserver behind it),
// with its objects kept by kine in a SQLite file of cairn's state directory, callers
// authenticated by cairn's tokens and kept to their tenant's namespaces.
//
// What standalone use needs beyond the library's defaults (each a trap measured in
// ../shared/spec/kubernetes-custom-resources.md): discovery switched back on, CRD groups added
// to the legacy /apis list, OpenAPI v2 and v3 configured so that CRD schemas are published,
// cairn's own authenticator and authorizer instead of delegation to a kube-apiserver, no
// priority-and-fairness, an empty but non-nil admission chain, and a stamped version.
package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	noopoteltrace "go.opentelemetry.io/otel/trace/noop"
	"k8s.io/apiextensions-apiserver/pkg/apiserver"
	crdoptions "k8s.io/apiextensions-apiserver/pkg/cmd/server/options"
	generatedopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/util/openapi"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/compatibility"
	netutils "k8s.io/utils/net"
)

// Version is the Kubernetes version cairn's kube API reports: that of the apiserver libraries
// it is built from.
const Version = "1.37.2"

// EnvDatabase names the environment variable that gives cairn-kube the PostgreSQL URL of
// cairn's database (internal/kubeproc sets it): in the environment, not on a command line
// every user of the machine can read.
const EnvDatabase = "CAIRNKUBE_DATABASE"

// Config says where and for whom to serve.
type Config struct {
	// Listen is the HTTPS address, host:port ("127.0.0.1:0" picks a port).
	Listen string
	// Dir keeps the objects (kube.db), the serving certificate (apiserver.crt/.key, self-signed
	// unless present) and kine's socket.
	Dir string
	// Hosts are extra names and addresses the serving certificate is for, besides localhost
	// and the listen address.
	Hosts []string
	// Tokens authenticates callers.
	Tokens TokenReviewer
	// Claims records which tenant owns each namespace.
	Claims *Claims
	// Database, when set, is the PostgreSQL URL the objects are kept in (kine's pgsql
	// driver), shared with cairn and every replica; empty: Dir/kube.db.
	Database string
}

// Server is a running kube API.
type Server struct {
	Addr     net.Addr // where it listens
	CertFile string   // the serving certificate, which is also its own CA
	done     chan error
}

// Done delivers the server's exit error once it stops.
func (s *Server) Done() <-chan error { return s.done }

// Start serves the kube API until ctx is done.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, err
	}
	etcd, err := startKine(ctx, cfg.Dir, cfg.Database)
	if err != nil {
		return nil, err
	}

	o := crdoptions.NewCustomResourceDefinitionsServerOptions(os.Stdout, os.Stderr)
	rec := o.RecommendedOptions
	rec.Etcd.StorageConfig.Transport.ServerList = etcd
	rec.Etcd.EnableWatchCache = true
	// cairn authenticates and authorizes itself; there is no kube-apiserver to delegate to,
	// no core/v1 informers for admission plugins, and no kube client for priority and fairness.
	rec.Authentication = nil
	rec.Authorization = nil
	rec.CoreAPI = nil
	rec.Admission = nil
	rec.Features.EnablePriorityAndFairness = false
	rec.Features.EnableProfiling = false

	host, portText, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("invalid kube listen address %q: %w", cfg.Listen, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, fmt.Errorf("invalid kube listen port %q", portText)
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("cannot listen for the kube API: %w", err)
	}
	rec.SecureServing.Listener = ln
	rec.SecureServing.BindPort = port
	if ip := netutils.ParseIPSloppy(host); ip != nil {
		rec.SecureServing.BindAddress = ip
	}
	rec.SecureServing.ServerCert.CertDirectory = cfg.Dir
	rec.SecureServing.ServerCert.PairName = "apiserver"
	ips := []net.IP{netutils.ParseIPSloppy("127.0.0.1")}
	var dns []string
	for _, h := range append([]string{host}, cfg.Hosts...) {
		if ip := netutils.ParseIPSloppy(h); ip != nil && !ip.IsUnspecified() {
			ips = append(ips, ip)
		} else if h != "" && ip == nil {
			dns = append(dns, h)
		}
	}
	if staleCert(filepath.Join(cfg.Dir, "apiserver.crt"), append(dns, "localhost"), ips, time.Now()) {
		// Made again below: the library only makes one when none exists, valid for a year.
		_ = os.Remove(filepath.Join(cfg.Dir, "apiserver.crt"))
		_ = os.Remove(filepath.Join(cfg.Dir, "apiserver.key"))
	}
	if err := rec.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", dns, ips); err != nil {
		return nil, fmt.Errorf("cannot make the kube API's serving certificate: %w", err)
	}

	serverConfig := genericapiserver.NewRecommendedConfig(apiserver.Codecs)
	serverConfig.EffectiveVersion = compatibility.NewEffectiveVersionFromString(Version, "", "")
	if err := o.ServerRunOptions.ApplyTo(&serverConfig.Config); err != nil {
		return nil, err
	}
	if err := rec.ApplyTo(serverConfig); err != nil {
		return nil, err
	}
	if err := o.APIEnablement.ApplyTo(&serverConfig.Config, apiserver.DefaultAPIResourceConfigSource(), apiserver.Scheme); err != nil {
		return nil, err
	}
	serverConfig.BuildHandlerChainFunc = func(h http.Handler, c *genericapiserver.Config) http.Handler {
		return withVersion(genericapiserver.DefaultBuildHandlerChain(h, c), c.EffectiveVersion.Info())
	}
	serverConfig.Authentication.Authenticator = bearertoken.New(&tokenAuthenticator{reviewer: cfg.Tokens})
	serverConfig.Authorization.Authorizer = &tenantAuthorizer{claims: cfg.Claims}
	serverConfig.AdmissionControl = admission.NewChainHandler() // empty, never nil: nil panics on PATCH while a CRD terminates
	defs := openapi.GetOpenAPIDefinitionsWithoutDisabledFeatures(generatedopenapi.GetOpenAPIDefinitions)
	namer := openapinamer.NewDefinitionNamer(apiserver.Scheme, scheme.Scheme)
	// Both are needed: the CRD OpenAPI controllers run only when the v2 config is present.
	serverConfig.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(defs, namer)
	serverConfig.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(defs, namer)
	serverConfig.OpenAPIConfig.Info.Title = "cairn"
	serverConfig.OpenAPIV3Config.Info.Title = "cairn"

	config := &apiserver.Config{
		GenericConfig: serverConfig,
		ExtraConfig: apiserver.ExtraConfig{
			CRDRESTOptionsGetter: crdoptions.NewCRDRESTOptionsGetter(*rec.Etcd, serverConfig.ResourceTransformers, serverConfig.StorageObjectCountTracker),
			ServiceResolver:      noServices{},
			AuthResolverWrapper:  webhook.NewDefaultAuthenticationInfoResolverWrapper(nil, nil, serverConfig.LoopbackClientConfig, noopoteltrace.NewTracerProvider()),
		},
	}
	completed := config.Complete()
	completed.GenericConfig.EnableDiscovery = true // upstream leaves /apis to the aggregator; there is none
	crds, err := completed.New(genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	watchLegacyGroups(crds)

	s := &Server{Addr: ln.Addr(), CertFile: filepath.Join(cfg.Dir, "apiserver.crt"), done: make(chan error, 1)}
	prepared := crds.GenericAPIServer.PrepareRun()
	go func() { s.done <- prepared.RunWithContext(ctx) }()
	if err := waitReady(ctx, crds.GenericAPIServer.LoopbackClientConfig, s.done); err != nil {
		return nil, err
	}
	return s, nil
}

// waitReady returns once /readyz answers ok: the CRD informer has synced and every known
// CRD's endpoints are installed, so that no client sees a 404 for a type that exists.
func waitReady(ctx context.Context, loopback *rest.Config, done chan error) error {
	client, err := discovery.NewDiscoveryClientForConfig(loopback)
	if err != nil {
		return err
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := client.RESTClient().Get().AbsPath("/readyz").Do(ctx).Error(); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-done:
			done <- err
			return fmt.Errorf("the kube API stopped before it was ready: %v", err)
		case <-tick.C:
		}
	}
}
