package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/kubeproc"
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
	a.kube, err = kubeproc.Start(ctx, kubeproc.Config{Binary: cfg.KubeBinary, Listen: cfg.KubeListen, Dir: dir,
		CairnURL: a.url, Hosts: cfg.KubeHosts, Logger: a.log})
	if err != nil {
		return fmt.Errorf("cannot serve the kube API: %w", err)
	}
	a.log.Info("the kube API is serving", "url", a.kube.URL())
	return nil
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
	return api.KubeEndpoint{Server: a.kube.URL(), CA: string(ca)}, nil
}

// KubeURL is where the kube API listens, "" when it is not served.
func (a *App) KubeURL() string {
	if a.kube == nil {
		return ""
	}
	return a.kube.URL()
}
