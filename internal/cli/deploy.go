package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/api"
)

func (r *runner) deployCommand() *cobra.Command {
	var (
		sf              sourceFlags
		stack           string
		disableRollback bool
		timeout         time.Duration
		parallelism     int
		refresh         bool
	)
	cmd := &cobra.Command{
		Use:   "deploy [-f FILE|DIR] --stack NAME",
		Short: "Create or update a stack and follow its events",
		Long: "Create or update a stack and follow its events. The template is a CloudFormation or ROS file,\n" +
			"or a directory of Terraform-language files (.tf, .tf.json). Ctrl-C (or SIGTERM, or SIGHUP)\n" +
			"cancels the deploy: the providers are told to stop, cairn follows the stack until it ends failed\n" +
			"(a CloudFormation stack rolls back) and exits 1; a second one stops following (exit 130).\n\n" + refreshHelp,
	}
	sf.register(cmd)
	f := cmd.Flags()
	f.StringVar(&stack, "stack", "", "stack name (required)")
	f.BoolVar(&disableRollback, "disable-rollback", false, "keep what was created when the deploy fails")
	f.DurationVar(&timeout, "timeout", 0, "stack timeout, such as 30m (0: none)")
	f.IntVar(&parallelism, "parallelism", 0, "at most this many provider calls at once (0: the server's default, 64)")
	f.BoolVar(&refresh, "refresh", false, "read every resource back through its provider first, store what is read, and repair drift")
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		if err := required("--stack", stack); err != nil {
			return err
		}
		secs, err := timeoutSeconds(timeout)
		if err != nil {
			return err
		}
		src, err := r.readSource(&sf)
		if err != nil {
			return err
		}
		req := src.req
		req.DisableRollback, req.TimeoutSeconds = disableRollback, secs
		req.Parallelism, req.Refresh = parallelism, refresh
		if refresh && src.dir == "" && !r.view().json {
			fmt.Fprintln(r.env.Stderr, "Note: --refresh has nothing to read in a CloudFormation or ROS template: custom resources have\n"+
				"no Read in their protocol, so the deploy plans against the stored state.")
		}
		ctx := cmd.Context()
		c, closeApp, err := r.connect(ctx)
		if err != nil {
			return err
		}
		defer closeApp()
		op, err := r.start(ctx, c, stack, func() (api.Operation, error) {
			op, err := c.Deploy(ctx, stack, req)
			if err == nil {
				err = r.keepLock(src, op.LockFile)
			}
			return op, err
		})
		if err != nil {
			return err
		}
		// The stack as it ended: its status (when op does not say) and its outputs.
		st, err := c.StackBrief(ctx, stack)
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
