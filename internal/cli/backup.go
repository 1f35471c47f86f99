package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/app"
)

func (r *runner) backupCommand() *cobra.Command {
	var to string
	var withCredentials bool
	cmd := &cobra.Command{
		Use:   "backup --to DIR",
		Short: "Copy the state directory (--dir) consistently, while cairn runs on it",
		Long: "Copy the state directory (--dir, SQLite) into a new directory: the state database and the kube\n" +
			"API's databases as consistent online copies (SQLite's VACUUM INTO, one snapshot each), the\n" +
			"functions' code and the self-made CA's certificate as files. cairn may go on serving meanwhile.\n" +
			"The server's token and private keys are left out unless --include-credentials: restored\n" +
			"without them, cairn makes a new token and CA (tell clients and handlers).\n\n" +
			"The secrets key (DIR.secrets.key beside DIR, or CAIRN_SECRETS_KEY) is not copied: keep it\n" +
			"apart; the backup cannot be opened without it.\n\n" +
			"Restore: stop cairn, move the state directory aside, put the backup in its place, start cairn\n" +
			"with the same secrets key. Operations that were running when the backup was taken resume.\n" +
			"With --database postgres://, back up with PostgreSQL's own tools (pg_dump, or base backups\n" +
			"with WAL archiving): see docs/server.md.",
		Example: "  cairn backup --dir /var/lib/cairn --to /backups/cairn-$(date +%F)",
	}
	cmd.Flags().StringVar(&to, "to", "", "the new directory to write, outside --dir (required)")
	cmd.Flags().BoolVar(&withCredentials, "include-credentials", false, "copy the server's token and the private keys of its certificates too (default: left out; restored without them, cairn makes new ones)")
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		if err := required("--to", to); err != nil {
			return err
		}
		if r.env.Getenv("CAIRN_DATABASE") != "" {
			return usagef("the state is in PostgreSQL (CAIRN_DATABASE): back it up with pg_dump; see docs/server.md")
		}
		files, err := app.Backup(cmd.Context(), r.dir, to, withCredentials)
		if err != nil {
			return err
		}
		for _, f := range files {
			fmt.Fprintln(r.env.Stdout, f)
		}
		fmt.Fprintf(r.env.Stderr, "Backed up %d files of %s into %s. Keep the secrets key apart: the backup needs it.\n", len(files), r.dir, to)
		return nil
	})
	return cmd
}
