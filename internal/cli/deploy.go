package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/api"
)

func (r *runner) deployCommand() *cobra.Command {
	var (
		file, stack     string
		params          []string
		disableRollback bool
		timeout         time.Duration
	)
	cmd := &cobra.Command{
		Use:   "deploy -f FILE --stack NAME",
		Short: "Create or update a stack and follow its events",
	}
	f := cmd.Flags()
	f.StringVarP(&file, "file", "f", "", "template file, - for stdin (required)")
	f.StringVar(&stack, "stack", "", "stack name (required)")
	f.StringArrayVarP(&params, "parameter", "p", nil, "template parameter KEY=VALUE (repeatable)")
	f.BoolVar(&disableRollback, "disable-rollback", false, "keep what was created when the deploy fails")
	f.DurationVar(&timeout, "timeout", 0, "stack timeout, such as 30m (0: none)")
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		if err := required("--stack", stack); err != nil {
			return err
		}
		secs, err := timeoutSeconds(timeout)
		if err != nil {
			return err
		}
		ps, err := parseParameters(params)
		if err != nil {
			return err
		}
		name, text, err := r.readTemplate(file)
		if err != nil {
			return err
		}
		req := api.DeployRequest{TemplateName: name, Template: text, Parameters: ps,
			DisableRollback: disableRollback, TimeoutSeconds: secs}
		ctx := cmd.Context()
		c, closeApp, err := r.connect(ctx)
		if err != nil {
			return err
		}
		defer closeApp()
		op, err := r.start(ctx, c, stack, func() (api.Operation, error) { return c.Deploy(ctx, stack, req) })
		if err != nil {
			return err
		}
		// The stack as it ended: its status (when op does not say) and its outputs.
		st, err := c.Stack(ctx, stack)
		if err != nil && !isNotFound(err) {
			return err
		}
		failed := opFailed(op, st.Status)
		var outs []api.Output
		if failed == nil {
			outs = st.Outputs
		}
		if err := r.view().deployed(op, outs); err != nil {
			return err
		}
		return failed
	})
	return cmd
}
