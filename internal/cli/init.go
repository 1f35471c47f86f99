package cli

import (
	"fmt"
	"os"
	"sort"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/tfmodule"
)

// initCommand installs the modules of a Terraform configuration, as `terraform init` does
// for modules: deploy, preview and validate do the same on demand, so running it first is
// only needed to install ahead of time (for example before going offline) or to --upgrade.
// Providers are not installed here: the server resolves them at deploy.
func (r *runner) initCommand() *cobra.Command {
	var dir string
	var upgrade bool
	cmd := &cobra.Command{
		Use:   "init [-f DIR]",
		Short: "Install the modules a Terraform configuration calls",
		Long: "Install the registry, git and archive modules a Terraform configuration calls into\n" +
			".terraform/modules, recorded in .terraform/modules/modules.json as terraform init does.\n" +
			"Modules already installed that still match their source and version are kept; --upgrade\n" +
			"installs every one again at the newest version allowed. deploy, preview and validate\n" +
			"install what is missing on their own; the server never downloads modules.",
	}
	f := cmd.Flags()
	f.StringVarP(&dir, "file", "f", "", "the Terraform configuration directory (default: the current directory)")
	f.BoolVar(&upgrade, "upgrade", false, "install every remote module again, the newest version its constraints allow")
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		if dir == "" {
			dir = "."
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || !hasTerraformFiles(dir) {
			return usagef("%s is not a Terraform configuration directory (no .tf or .tf.json files)", dir)
		}
		res, err := r.installModules(cmd.Context(), dir, upgrade)
		if err != nil {
			return err
		}
		records := make([]tfmodule.Record, 0, len(res.Manifest))
		for k, rec := range res.Manifest {
			if k != "" {
				records = append(records, rec)
			}
		}
		sort.Slice(records, func(i, j int) bool { return records[i].Key < records[j].Key })
		if r.output == "json" {
			return writeJSON(r.env.Stdout, map[string]any{"modules": records, "installed": nonNil(res.Installed)})
		}
		for _, rec := range records {
			what := rec.Source
			if rec.Version != "" {
				what += " " + rec.Version
			}
			fmt.Fprintf(r.env.Stdout, "- %s: %s in %s\n", rec.Key, what, rec.Dir)
		}
		fmt.Fprintf(r.env.Stdout, "Modules installed (%d downloaded, %d calls).\n", len(res.Installed), len(records))
		return nil
	})
	return cmd
}
