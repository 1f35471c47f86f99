package cli

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/client"
)

func (r *runner) kubeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kube",
		Short: "Cairn's Kubernetes API (cairn server --kube-listen)",
	}
	cmd.AddCommand(r.kubeKubeconfigCommand())
	return cmd
}

func (r *runner) kubeKubeconfigCommand() *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "kubeconfig [--context NAME]",
		Short: "Print a kubeconfig for cairn's Kubernetes API, as the current token's tenant",
		Long: "Print a kubeconfig (server, CA, and the token this command uses) for the Kubernetes API of\n" +
			"the cairn server (--server), for kubectl, client-go and controller-runtime. Save it and point\n" +
			"KUBECONFIG at it. The token's tenant reads and writes only the namespaces it owns; the server's\n" +
			"own token may do everything, CRDs included.",
	}
	cmd.Flags().StringVar(&name, "context", "cairn", "name of the cluster, user and context in the kubeconfig")
	cmd.RunE = r.withClient(nil, func(ctx context.Context, c *client.Client, _ []string) error {
		ep, err := c.Kube(ctx)
		if err != nil {
			return err
		}
		out, err := kubeconfig(ep, name, r.token)
		if err != nil {
			return err
		}
		_, err = r.env.Stdout.Write(out)
		return err
	})
	return cmd
}

// kubeconfig is a kubeconfig of one cluster, user and context, all called name.
func kubeconfig(ep api.KubeEndpoint, name, token string) ([]byte, error) {
	if token == "" {
		token = "no-auth" // a server without auth takes any token; kubectl must send one
	}
	type named struct {
		Name    string         `yaml:"name"`
		Cluster map[string]any `yaml:"cluster,omitempty"`
		User    map[string]any `yaml:"user,omitempty"`
		Context map[string]any `yaml:"context,omitempty"`
	}
	cfg := struct {
		APIVersion     string  `yaml:"apiVersion"`
		Kind           string  `yaml:"kind"`
		Clusters       []named `yaml:"clusters"`
		Users          []named `yaml:"users"`
		Contexts       []named `yaml:"contexts"`
		CurrentContext string  `yaml:"current-context"`
	}{
		APIVersion: "v1", Kind: "Config",
		Clusters: []named{{Name: name, Cluster: map[string]any{"server": ep.Server,
			"certificate-authority-data": base64.StdEncoding.EncodeToString([]byte(ep.CA))}}},
		Users:          []named{{Name: name, User: map[string]any{"token": token}}},
		Contexts:       []named{{Name: name, Context: map[string]any{"cluster": name, "user": name}}},
		CurrentContext: name,
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot write the kubeconfig: %w", err)
	}
	return out, nil
}

