package cli

import (
	"github.com/spf13/cobra"
)

func (r *runner) eventsCommand() *cobra.Command {
	var (
		stack  string
		follow bool
	)
	cmd := &cobra.Command{
		Use:   "events --stack NAME",
		Short: "Print a stack's events, oldest first",
		Long: "Print a stack's events, oldest first. With --follow, keep printing new ones until\n" +
			"interrupted; with --output json too, one JSON object a line.",
	}
	cmd.Flags().StringVar(&stack, "stack", "", "stack name (required)")
	cmd.Flags().BoolVar(&follow, "follow", false, "keep printing new events until interrupted")
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		if err := required("--stack", stack); err != nil {
			return err
		}
		ctx := cmd.Context()
		c, closeApp, err := r.connect(ctx)
		if err != nil {
			return err
		}
		defer closeApp()
		evs, err := c.Events(ctx, stack, 0, 0)
		if err != nil {
			return err
		}
		if !follow {
			return r.view().events(evs)
		}
		show := r.view().eventStream(evs)
		var after int64
		for {
			for _, ev := range evs {
				show(ev)
				after = ev.Seq
			}
			evs, err = c.Events(ctx, stack, after, pollWait)
			if ctx.Err() != nil {
				return &exitError{code: exitInterrupted}
			}
			if isNotFound(err) {
				return nil // the stack was deleted: nothing more will come
			}
			if err != nil {
				return err
			}
		}
	})
	return cmd
}
