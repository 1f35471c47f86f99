package cli

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/client"
)

func (r *runner) completionCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "completion",
		Short: "Print a shell completion script (bash, zsh, fish or powershell)",
		Long: "Print the completion script of a shell. Commands, flags and their values complete; --stack\n" +
			"completes stack names when --server or CAIRN_SERVER names a server (without one, listing\n" +
			"the stacks would start cairn in-process, which may resume its operations, so it does not).",
		Example: "  # bash, this shell; add the line to ~/.bashrc to keep it\n" +
			"  source <(cairn completion bash)\n" +
			"  # zsh\n" +
			"  cairn completion zsh > \"${fpath[1]}/_cairn\"\n" +
			"  # fish\n" +
			"  cairn completion fish > ~/.config/fish/completions/cairn.fish\n" +
			"  # PowerShell\n" +
			"  cairn completion powershell | Out-String | Invoke-Expression",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("cairn cannot complete for %q: give bash, zsh, fish or powershell", args[0])
			}
			return cmd.Help()
		},
	}
	shells := []struct {
		name, example string
		gen           func(root *cobra.Command) error
	}{
		{"bash", "source <(cairn completion bash)", func(root *cobra.Command) error { return root.GenBashCompletionV2(r.env.Stdout, true) }},
		{"zsh", "cairn completion zsh > \"${fpath[1]}/_cairn\"", func(root *cobra.Command) error { return root.GenZshCompletion(r.env.Stdout) }},
		{"fish", "cairn completion fish | source", func(root *cobra.Command) error { return root.GenFishCompletion(r.env.Stdout, true) }},
		{"powershell", "cairn completion powershell | Out-String | Invoke-Expression",
			func(root *cobra.Command) error { return root.GenPowerShellCompletionWithDesc(r.env.Stdout) }},
	}
	for _, sh := range shells {
		sub := &cobra.Command{
			Use:     sh.name,
			Short:   "Print the " + sh.name + " completion script",
			Example: "  " + sh.example,
		}
		sub.RunE = r.action(func(cmd *cobra.Command) error { return sh.gen(cmd.Root()) })
		cmd.AddCommand(sub)
	}
	return cmd
}

// completeStacks registers the completion of --stack on every command that has it.
func (r *runner) completeStacks(root *cobra.Command) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Flags().Lookup("stack") != nil {
			_ = c.RegisterFlagCompletionFunc("stack", r.stackNames) // only fails on a flag registered twice
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// stackNames lists the stacks of --server whose names start with prefix. Without a server it
// offers nothing: starting cairn in-process on a key press would be slow and would resume the
// operations left in --dir. A server that does not answer within 2 s offers nothing either.
func (r *runner) stackNames(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	r.fromEnv(cmd)
	none := cobra.ShellCompDirectiveNoFileComp
	if r.server == "" || checkServerURL(r.server) != nil {
		return nil, none
	}
	hc, err := httpClient(r.caFile)
	if err != nil {
		return nil, none
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	stacks, err := client.New(r.server, r.token, hc, client.WithRetry(client.Retry{})).Stacks(ctx)
	if err != nil {
		return nil, none
	}
	var names []string
	for _, st := range stacks {
		if strings.HasPrefix(st.Name, prefix) {
			names = append(names, st.Name)
		}
	}
	return names, none
}
