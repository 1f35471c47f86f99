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
		Example: "  cairn kube kubeconfig > ~/.kube/cairn.yaml\n" +
			"  cairn kube enable hashicorp/random random_pet",
	}
	cmd.AddCommand(r.kubeKubeconfigCommand(), r.kubeEnableCommand())
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
	cmd.Example = "  cairn kube kubeconfig --server https://cairn.example:8443 > ~/.kube/cairn.yaml\n" +
		"  KUBECONFIG=~/.kube/cairn.yaml kubectl get crds"
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

func (r *runner) kubeEnableCommand() *cobra.Command {
	var version string
	cmd := &cobra.Command{
		Use:   "enable PROVIDER TYPE... [--version CONSTRAINT]",
		Short: "Offer resource types of a Terraform provider as Kubernetes types (CRDs)",
		Long: "Make a CRD of each named resource type of a Terraform provider (found where cairn finds\n" +
			"providers: --plugin-dir, the Terraform CLI configuration), generated from the provider's\n" +
			"schema: configurable attributes in spec, computed ones in status.atProvider. Objects of these\n" +
			"types applied with kubectl are deployed by cairn, one stack per namespace (kube-NAMESPACE);\n" +
			"their status carries Ready and Synced conditions, and kubectl delete destroys them. Needs the\n" +
			"server's own token (CRDs are cluster-wide).",
		Example: "  cairn kube enable hashicorp/random random_pet random_string\n  cairn kube enable hashicorp/time time_offset --version '~> 0.14'",
	}
	cmd.Flags().StringVar(&version, "version", "", "version constraint of the provider; default the newest found")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) < 2 {
			return usagef("%s takes a provider and at least one of its resource types", cmd.CommandPath())
		}
		return r.action(func(cmd *cobra.Command) error {
			ctx := cmd.Context()
			c, stop, err := r.connect(ctx)
			if err != nil {
				return err
			}
			defer stop()
			resp, err := c.KubeEnable(ctx, api.KubeEnableRequest{Provider: args[0], Version: version, Types: args[1:]})
			if err != nil {
				return err
			}
			for _, crd := range resp.CRDs {
				fmt.Fprintf(r.env.Stdout, "%s (%s %s)\n", crd, resp.Provider, resp.Version)
			}
			return nil
		})(cmd, nil)
	}
	return cmd
}
