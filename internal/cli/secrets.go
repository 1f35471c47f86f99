package cli

import (
	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/app"
)

func (r *runner) secretsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secrets",
		Short: "Manage the key that encrypts secrets in the state",
	}
	var keyFile string
	rotate := &cobra.Command{
		Use:   "rotate-key",
		Short: "Encrypt the state's secrets with a new key and drop the old one",
		Long: "Encrypt every secret in the state of --dir with a new key, in one transaction, and drop the\n" +
			"old key from the key file once that committed (the file is rewritten atomically, mode 0600).\n" +
			"The state must not be in use: stop the server first. With CAIRN_SECRETS_KEY instead of a\n" +
			"key file, put the new key first (NEW,OLD), run this, then remove OLD. Back up the key file\n" +
			"again afterwards: the old key no longer opens the state.",
	}
	rotate.Flags().StringVar(&keyFile, "secrets-key-file", "", "key file (env CAIRN_SECRETS_KEY_FILE; default DIR.secrets.key beside DIR)")
	rotate.RunE = r.action(func(cmd *cobra.Command) error {
		if r.server != "" {
			return usagef("rotate-key works on a state directory (--dir), not through --server")
		}
		if v := r.env.Getenv(envName("secrets-key-file")); v != "" && !cmd.Flags().Changed("secrets-key-file") {
			keyFile = v
		}
		rot, err := app.RotateSecretsKey(cmd.Context(), app.Config{Dir: r.dir, SecretsKeyFile: keyFile,
			SecretsKey: r.env.Getenv("CAIRN_SECRETS_KEY")})
		if err != nil {
			return err
		}
		return r.view().rotated(rot)
	})
	cmd.AddCommand(rotate)
	return cmd
}
