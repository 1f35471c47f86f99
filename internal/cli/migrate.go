package cli

import (
	"fmt"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/app"
)

func (r *runner) migrateCommand() *cobra.Command {
	var to string
	cmd := &cobra.Command{
		Use:   "migrate --to postgres://...",
		Short: "Move the SQLite state of --dir into an empty PostgreSQL database, for a team server",
		Long: "Move everything in the state directory's SQLite database (stacks, resources, the journal,\n" +
			"operations, events, keys, custom-resource requests, functions and their code, the\n" +
			"private-provider registry, tokens, grants and the audit log) into a PostgreSQL database that\n" +
			"holds no cairn state yet, in one transaction, and check every table's row count in both.\n" +
			"Secrets stay sealed: start the PostgreSQL servers with the same secrets key (the key file\n" +
			"beside --dir, or CAIRN_SECRETS_KEY). No server may run on --dir meanwhile. The SQLite\n" +
			"database is left as it was. The kube API's objects (--kube-listen) are not moved.",
		Example: "  cairn migrate --dir /var/lib/cairn --to 'postgres://cairn@db.internal/cairn?sslmode=verify-full'\n" +
			"  cairn server --database 'postgres://cairn@db.internal/cairn?sslmode=verify-full' --secrets-key-file /var/lib/cairn.secrets.key",
	}
	var keyFile string
	cmd.Flags().StringVar(&to, "to", "", "the PostgreSQL database URL (required)")
	cmd.Flags().StringVar(&keyFile, "secrets-key-file", "", "file of the keys the state is sealed with (env CAIRN_SECRETS_KEY_FILE; default DIR.secrets.key beside DIR; or CAIRN_SECRETS_KEY)")
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		if err := required("--to", to); err != nil {
			return err
		}
		if keyFile == "" {
			keyFile = r.env.Getenv("CAIRN_SECRETS_KEY_FILE")
		}
		cfg := app.Config{Dir: r.dir, SecretsKey: r.env.Getenv("CAIRN_SECRETS_KEY"), SecretsKeyFile: keyFile}
		m, err := app.Migrate(cmd.Context(), cfg, to)
		if err != nil {
			return err
		}
		if r.output == "json" {
			return writeJSON(r.env.Stdout, m)
		}
		tables := make([]string, 0, len(m.Tables))
		for t := range m.Tables {
			tables = append(tables, t)
		}
		sort.Strings(tables)
		tw := tabwriter.NewWriter(r.env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TABLE\tROWS")
		for _, t := range tables {
			fmt.Fprintf(tw, "%s\t%d\n", t, m.Tables[t])
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(r.env.Stderr, "Moved %s into PostgreSQL; every table's rows counted equal in both. Start the servers with --database and the same secrets key.\n", r.dir)
		return nil
	})
	return cmd
}
