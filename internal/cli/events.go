package cli

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/api"
)

func (r *runner) eventsCommand() *cobra.Command {
	var (
		stack  string
		follow bool
	)
	cmd := &cobra.Command{
		Use:   "events --stack NAME",
		Short: "Print a stack's events, oldest first",
	}
	cmd.Flags().StringVar(&stack, "stack", "", "stack name (required)")
	cmd.Flags().BoolVar(&follow, "follow", false, "keep printing new events until interrupted")
	cmd.RunE = r.action(func(cmd *cobra.Command, _ []string) error {
		if stack == "" {
			return usagef("--stack is required")
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
			if r.output == "json" {
				return writeJSON(r.env.Stdout, nonNil(evs))
			}
			p := newEventPrinter(r.env.Stdout, isTerminal(r.env.Stdout))
			for _, ev := range evs {
				p.print(ev)
			}
			return nil
		}
		// Following: one event per line, as text or as a JSON object.
		print := newEventPrinter(r.env.Stdout, isTerminal(r.env.Stdout)).print
		if r.output == "json" {
			enc := json.NewEncoder(r.env.Stdout)
			print = func(ev api.Event) { _ = enc.Encode(ev) }
		}
		var after int64
		for {
			for _, ev := range evs {
				print(ev)
				after = ev.Seq
			}
			evs, err = c.Events(ctx, stack, after, pollWait)
			if ctx.Err() != nil {
				return &exitError{code: exitInterrupted}
			}
			if err != nil {
				return err
			}
		}
	})
	return cmd
}
