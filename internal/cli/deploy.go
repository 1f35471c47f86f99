package cli

import (
	"fmt"
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
	f.StringVarP(&file, "file", "f", "", "template file (required)")
	f.StringVar(&stack, "stack", "", "stack name (required)")
	f.StringArrayVarP(&params, "parameter", "p", nil, "template parameter KEY=VALUE (repeatable)")
	f.BoolVar(&disableRollback, "disable-rollback", false, "keep what was created when the deploy fails")
	f.DurationVar(&timeout, "timeout", 0, "stack timeout, such as 30m (0: none)")
	cmd.RunE = r.action(func(cmd *cobra.Command, _ []string) error {
		if stack == "" {
			return usagef("--stack is required")
		}
		if timeout < 0 {
			return usagef("--timeout must not be negative")
		}
		ps, err := parseParameters(params)
		if err != nil {
			return err
		}
		name, text, err := readTemplate(file)
		if err != nil {
			return err
		}
		req := api.DeployRequest{TemplateName: name, Template: text, Parameters: ps,
			DisableRollback: disableRollback, TimeoutSeconds: int((timeout + time.Second - 1) / time.Second)}
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
		var outs []api.Output
		if op.Status == "succeeded" {
			if outs, err = c.Outputs(ctx, stack); err != nil {
				return err
			}
		}
		if r.output == "json" {
			if err := writeJSON(r.env.Stdout, deployResult{Operation: op, Outputs: nonNil(outs)}); err != nil {
				return err
			}
		} else {
			writeOutputs(r.env.Stdout, "Outputs:", outs)
		}
		return opFailed(op)
	})
	return cmd
}

// deployResult is what deploy prints with --output json.
type deployResult struct {
	Operation api.Operation `json:"operation"`
	Outputs   []api.Output  `json:"outputs"`
}

// eventSink prints events as lines, or nothing with --output json.
func (r *runner) eventSink() func(api.Event) {
	if r.output == "json" {
		return func(api.Event) {}
	}
	return newEventPrinter(r.env.Stdout, isTerminal(r.env.Stdout)).print
}

// opFailed is the error for an operation that did not succeed, nil otherwise.
func opFailed(op api.Operation) error {
	if op.Status == "succeeded" {
		return nil
	}
	msg := fmt.Sprintf("error: %s of %s %s", op.Kind, op.Stack, op.Status)
	if op.StackStatus != "" {
		msg += " (" + op.StackStatus + ")"
	}
	if op.StatusReason != "" {
		msg += ": " + op.StatusReason
	}
	return &exitError{code: exitFailed, msg: msg}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
