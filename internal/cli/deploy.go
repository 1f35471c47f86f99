package cli

import (
	"fmt"
	"slices"
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
		planPath        string
		yes             bool
	)
	cmd := &cobra.Command{
		Use:   "deploy [-f FILE|DIR] --stack NAME | deploy --plan FILE",
		Short: "Create or update a stack and follow its events",
		Long: "Create or update a stack and follow its events. The template is a CloudFormation or ROS file,\n" +
			"or a directory of Terraform-language files (.tf, .tf.json). Ctrl-C (or SIGTERM, or SIGHUP)\n" +
			"cancels the deploy: the providers are told to stop, cairn follows the stack until it ends failed\n" +
			"(a CloudFormation stack rolls back) and exits 1; a second one stops following (exit 130).\n\n" +
			"On a terminal, deploy shows the plan and asks before acting (--yes does not ask); it never asks when\n" +
			"stdin or stdout is not a terminal, or with --output json. --plan applies a plan saved by\n" +
			"`cairn preview --out` exactly, and is refused (plan_stale) when the stack changed since.\n\n" + refreshHelp,
	}
	sf.register(cmd)
	f := cmd.Flags()
	f.StringVar(&stack, "stack", "", "stack name (required)")
	f.BoolVar(&disableRollback, "disable-rollback", false, "keep what was created when the deploy fails")
	f.DurationVar(&timeout, "timeout", 0, "stack timeout, such as 30m (0: none)")
	f.IntVar(&parallelism, "parallelism", 0, "at most this many provider calls at once (0: the server's default, 64)")
	f.BoolVar(&refresh, "refresh", false, "read every resource back through its provider first, store what is read, and repair drift")
	f.StringVar(&planPath, "plan", "", "apply the plan saved in FILE by cairn preview --out (it carries the template and parameters)")
	f.BoolVarP(&yes, "yes", "y", false, "do not ask before deploying (a deploy only asks on a terminal)")
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		secs, err := timeoutSeconds(timeout)
		if err != nil {
			return err
		}
		var src source
		if planPath != "" {
			if src, stack, err = r.savedPlanSource(cmd, &sf, planPath, stack); err != nil {
				return err
			}
		} else {
			if err := required("--stack", stack); err != nil {
				return err
			}
			if src, err = r.readSource(&sf); err != nil {
				return err
			}
			src.req.Refresh = refresh
		}
		req := src.req
		req.DisableRollback, req.TimeoutSeconds, req.Parallelism = disableRollback, secs, parallelism
		if refresh && src.dir == "" && !r.view().json {
			fmt.Fprintln(r.env.Stderr, "Note: --refresh reads back only the resources whose provider can read: custom resources have\n"+
				"no Read in their protocol, so the deploy plans them against the stored state.")
		}
		ctx := cmd.Context()
		c, closeApp, err := r.connect(ctx)
		if err != nil {
			return err
		}
		defer closeApp()
		if planPath == "" && !yes && r.interactive() {
			p, err := c.Preview(ctx, stack, req)
			if err != nil {
				return err
			}
			if err := r.view().preview(p); err != nil {
				return err
			}
			if hasChanges(p) && !r.confirm("Do you want to perform these actions on stack "+stack+"?",
				"cairn will perform the actions described above.") {
				return &exitError{code: exitFailed, msg: "Deploy cancelled."}
			}
			req.Plan = p.Plan // exactly what was shown, or nothing
		}
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

// savedPlanSource is the request a plan saved by preview --out carries. Flags that would
// change what it applies are refused; --stack, when given, must name its stack.
func (r *runner) savedPlanSource(cmd *cobra.Command, sf *sourceFlags, path, stack string) (source, string, error) {
	for _, name := range []string{"file", "var-file", "upgrade", "refresh"} {
		if cmd.Flags().Changed(name) {
			return source{}, "", usagef("--%s cannot be used with --plan: the saved plan carries its template, parameters and options", name)
		}
	}
	pf, err := readPlanFile(path)
	if err != nil {
		return source{}, "", err
	}
	if stack != "" && stack != pf.Stack {
		return source{}, "", usagef("the plan in %s is for stack %s, not %s", path, pf.Stack, stack)
	}
	req := pf.Request
	req.Plan = pf.Plan
	// Ephemeral variables were not saved: they come again from --var / -p and TF_VAR_*.
	given, err := parseParameters(append(append([]string(nil), sf.params...), sf.vars...))
	if err != nil {
		return source{}, "", err
	}
	env := tfVarEnv(r.env.Environ)
	for name, v := range given {
		if !slices.Contains(pf.Ephemeral, name) {
			return source{}, "", usagef("--var %s cannot be used with --plan: the saved plan carries its value (only ephemeral variables are given again)", name)
		}
		req.Parameters = withValue(req.Parameters, name, v)
	}
	for _, name := range pf.Ephemeral {
		if v, ok := env[name]; ok {
			req.Env = withValue(req.Env, name, v)
		}
	}
	return source{req: req}, pf.Stack, nil
}

func withValue(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}
