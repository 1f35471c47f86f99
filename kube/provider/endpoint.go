package provider

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// endpoints hands out a client per kube endpoint (a kubeconfig and context, or cairn's own).
type endpoints struct {
	defaultServer, defaultCAFile, defaultToken, defaultAs string
	guard                                                 bool // refuse kubeconfig endpoints on this host's neighbours

	mu      sync.Mutex
	clients map[string]*clients
}

// clients reach one endpoint.
type clients struct {
	dyn    dynamic.Interface
	mapper meta.ResettableRESTMapper
	name   string // for messages: the context, or "cairn's kube API"
}

// get returns the clients of kubeconfig (its content, "" for cairn's own kube API) and
// kubeContext ("" for the kubeconfig's current context).
func (e *endpoints) get(kubeconfig, kubeContext string) (*clients, error) {
	key := fmt.Sprintf("%x", sha256.Sum256([]byte(kubeconfig+"\x00"+kubeContext)))
	e.mu.Lock()
	defer e.mu.Unlock()
	if c, ok := e.clients[key]; ok {
		return c, nil
	}
	var cfg *rest.Config
	name := "cairn's kube API"
	if kubeconfig == "" {
		if kubeContext != "" {
			return nil, fmt.Errorf("context %q needs a kubeconfig to choose from", kubeContext)
		}
		if e.defaultServer == "" {
			return nil, fmt.Errorf("no kubeconfig given and cairn serves no kube API here (start cairn server with --kube-listen)")
		}
		cfg = &rest.Config{Host: e.defaultServer, BearerToken: e.defaultToken,
			TLSClientConfig: rest.TLSClientConfig{CAFile: e.defaultCAFile}}
		if e.defaultAs != "" {
			cfg.Impersonate = rest.ImpersonationConfig{UserName: e.defaultAs}
		}
	} else {
		raw, err := clientcmd.Load([]byte(kubeconfig))
		if err != nil {
			return nil, fmt.Errorf("invalid kubeconfig: %w", err)
		}
		if e.guard {
			if err := selfContained(raw); err != nil {
				return nil, err
			}
		}
		overrides := &clientcmd.ConfigOverrides{CurrentContext: kubeContext}
		if cfg, err = clientcmd.NewNonInteractiveClientConfig(*raw, kubeContext, overrides, nil).ClientConfig(); err != nil {
			return nil, fmt.Errorf("kubeconfig: %w", err)
		}
		name = "context " + kubeContext
		if kubeContext == "" {
			name = "context " + raw.CurrentContext
		}
		if e.guard {
			cfg.Dial = guardedDial
		}
	}
	cfg.QPS, cfg.Burst = 100, 200
	cfg.UserAgent = "cairn"
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c := &clients{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)), name: name}
	e.clients[key] = c
	return c, nil
}

// guardedDial connects only to addresses a tenant may reach from a shared server: not
// loopback, link-local (where cloud metadata lives) or unspecified. It checks the address it
// connects to, after resolution, so that no name can point around it.
func guardedDial(ctx context.Context, network, address string) (net.Conn, error) {
	d := &net.Dialer{Timeout: 30 * time.Second, Control: func(_, addr string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return err
		}
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return err
		}
		ip = ip.Unmap()
		if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() {
			return fmt.Errorf("a kubeconfig of a tenant's stack may not reach %s on this server (loopback, link-local or unspecified)", ip)
		}
		return nil
	}}
	return d.DialContext(ctx, network, address)
}

// selfContained refuses a kubeconfig that would make this process read a file, run a command
// or take credentials from anywhere but the kubeconfig itself: on a shared server, a tenant's
// kubeconfig must not reach the server's files or run code (exec plugins run here, with this
// process's environment).
func selfContained(cfg *clientcmdapi.Config) error {
	for name, u := range cfg.AuthInfos {
		switch {
		case u.Exec != nil:
			return fmt.Errorf("kubeconfig user %q: exec credential plugins are not allowed in a tenant's stack", name)
		case u.AuthProvider != nil:
			return fmt.Errorf("kubeconfig user %q: auth-provider is not allowed in a tenant's stack", name)
		case u.TokenFile != "" || u.ClientCertificate != "" || u.ClientKey != "":
			return fmt.Errorf("kubeconfig user %q: files (tokenFile, client-certificate, client-key) are not allowed in a tenant's stack: give their content (token, client-certificate-data, client-key-data)", name)
		case u.Impersonate != "" || len(u.ImpersonateGroups) > 0 || u.ImpersonateUID != "" || len(u.ImpersonateUserExtra) > 0:
			return fmt.Errorf("kubeconfig user %q: impersonation is not allowed in a tenant's stack", name)
		}
	}
	for name, c := range cfg.Clusters {
		if c.CertificateAuthority != "" {
			return fmt.Errorf("kubeconfig cluster %q: certificate-authority files are not allowed in a tenant's stack: give certificate-authority-data", name)
		}
	}
	return nil
}
