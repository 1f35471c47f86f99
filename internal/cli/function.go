package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/function"
)

// functionCommand is `cairn function create|list|describe|delete|invoke|logs`.
func (r *runner) functionCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "function",
		Short: "Manage functions: HTTP endpoints and Lambda-style handlers that ServiceTokens can name",
	}
	cmd.AddCommand(r.functionCreateCommand(), r.functionListCommand(), r.functionDescribeCommand(),
		r.functionDeleteCommand(), r.functionInvokeCommand(), r.functionLogsCommand())
	return cmd
}

// named is action for commands taking exactly one NAME.
func (r *runner) named(fn func(cmd *cobra.Command, name string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usagef("%s takes one function NAME", cmd.CommandPath())
		}
		return r.action(func(cmd *cobra.Command) error { return fn(cmd, args[0]) })(cmd, nil)
	}
}

func (r *runner) functionCreateCommand() *cobra.Command {
	var (
		url, code, runtime, handler string
		timeout                     time.Duration
		memory, concurrency         int
		env                         []string
	)
	cmd := &cobra.Command{
		Use:   "create NAME (--url URL | --code DIR --runtime provided | --code DIR --runtime nodejs|python3.12 --handler index.handler)",
		Short: "Create a function; its code directory is copied into cairn's data directory",
	}
	f := cmd.Flags()
	f.StringVar(&url, "url", "", "an HTTP endpoint that is POSTed each event")
	f.StringVar(&code, "code", "", "the code directory (copied at create)")
	f.StringVar(&runtime, "runtime", "", "provided (an executable bootstrap speaking the Lambda Runtime API), nodejs (or nodejs20.x ...), python (or python3.12 ...), or terraform-provider (a provider binary served as a private provider's function)")
	f.StringVar(&handler, "handler", "", "nodejs, python: MODULE.FUNCTION, such as index.handler")
	f.StringArrayVar(&env, "env", nil, "an environment variable of the function's processes, NAME=VALUE (repeatable); values are stored encrypted and never shown")
	f.DurationVar(&timeout, "timeout", 0, "per-invocation timeout (default 30s, at most 15m)")
	f.IntVar(&memory, "memory", 0, "memory in MB (default 128); see docs/functions.md for what is enforced")
	f.IntVar(&concurrency, "concurrency", 0, "warm processes (url: requests in flight) at most (default 4)")
	cmd.RunE = r.named(func(cmd *cobra.Command, name string) error {
		req := api.CreateFunctionRequest{Name: name, URL: url, Runtime: runtime, Handler: handler,
			TimeoutSeconds: int(timeout.Round(time.Second) / time.Second), MemoryMB: memory, Concurrency: concurrency}
		for _, kv := range env {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return usagef("--env takes NAME=VALUE, not %q", k)
			}
			if req.Environment == nil {
				req.Environment = map[string]string{}
			}
			req.Environment[k] = v
		}
		switch {
		case url != "" && (code != "" || runtime != ""):
			return usagef("give either --url or --code with --runtime, not both")
		case url == "" && code == "":
			return usagef("give --url URL, or --code DIR with --runtime provided, nodejs or python")
		case code != "" && runtime == "":
			return usagef("--code needs --runtime provided, nodejs or python")
		case timeout > 0 && timeout < time.Second:
			return usagef("--timeout must be at least 1s")
		}
		if code != "" {
			zip, err := function.ZipDir(code)
			if err != nil {
				return err
			}
			req.Code = zip
		}
		ctx := cmd.Context()
		c, closeApp, err := r.connect(ctx)
		if err != nil {
			return err
		}
		defer closeApp()
		fn, err := c.CreateFunction(ctx, req)
		if err != nil {
			return err
		}
		return r.showFunction(fn)
	})
	return cmd
}

func (r *runner) functionListCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "list", Short: "List functions"}
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		ctx := cmd.Context()
		c, closeApp, err := r.connect(ctx)
		if err != nil {
			return err
		}
		defer closeApp()
		fns, err := c.Functions(ctx)
		if err != nil {
			return err
		}
		if r.output == "json" {
			return writeJSON(r.env.Stdout, nonNil(fns))
		}
		if len(fns) == 0 {
			fmt.Fprintln(r.env.Stdout, "no functions")
			return nil
		}
		tw := tabwriter.NewWriter(r.env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tKIND\tHANDLER/URL\tTIMEOUT\tMEMORY\tCONCURRENCY")
		for _, f := range fns {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%ds\t%d MB\t%d\n", f.Name, f.Kind, f.Handler+f.URL, f.TimeoutSeconds, f.MemoryMB, f.Concurrency)
		}
		return tw.Flush()
	})
	return cmd
}

func (r *runner) functionDescribeCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "describe NAME", Short: "Describe a function and the names it answers to"}
	cmd.RunE = r.named(func(cmd *cobra.Command, name string) error {
		ctx := cmd.Context()
		c, closeApp, err := r.connect(ctx)
		if err != nil {
			return err
		}
		defer closeApp()
		fn, err := c.Function(ctx, name)
		if err != nil {
			return err
		}
		return r.showFunction(fn)
	})
	return cmd
}

func (r *runner) showFunction(f api.Function) error {
	if r.output == "json" {
		return writeJSON(r.env.Stdout, f)
	}
	w := r.env.Stdout
	fmt.Fprintf(w, "Name:         %s\nKind:         %s\n", f.Name, f.Kind)
	if f.URL != "" {
		fmt.Fprintf(w, "URL:          %s\n", f.URL)
	}
	if f.Handler != "" {
		fmt.Fprintf(w, "Handler:      %s\n", f.Handler)
	}
	if len(f.EnvironmentKeys) > 0 {
		fmt.Fprintf(w, "Environment:  %s (values not shown)\n", strings.Join(f.EnvironmentKeys, ", "))
	}
	fmt.Fprintf(w, "Timeout:      %ds\nMemory:       %d MB\nConcurrency:  %d\nCreated:      %s\n", f.TimeoutSeconds, f.MemoryMB,
		f.Concurrency, f.CreatedAt.In(timeZone).Format(time.RFC3339))
	fmt.Fprintf(w, "ServiceToken: %s\n", f.ARN)
	fmt.Fprintf(w, "              (or acs:fc:REGION:ACCOUNT:services/SERVICE/functions/%s, urn:fss:REGION:PROJECT:function:default:%s:latest)\n",
		f.Name, f.Name)
	return nil
}

func (r *runner) functionDeleteCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "delete NAME", Short: "Delete a function, its code copy and its logs"}
	cmd.RunE = r.named(func(cmd *cobra.Command, name string) error {
		ctx := cmd.Context()
		c, closeApp, err := r.connect(ctx)
		if err != nil {
			return err
		}
		defer closeApp()
		if err := c.DeleteFunction(ctx, name); err != nil {
			return err
		}
		if r.output == "json" {
			return writeJSON(r.env.Stdout, map[string]string{"deleted": name})
		}
		fmt.Fprintf(r.env.Stdout, "deleted function %s\n", name)
		return nil
	})
	return cmd
}

func (r *runner) functionInvokeCommand() *cobra.Command {
	var payload string
	var async bool
	cmd := &cobra.Command{Use: "invoke NAME [--payload JSON] [--async]",
		Short: "Invoke a function and print its result (exit 1 when the invocation failed)"}
	cmd.Flags().StringVar(&payload, "payload", "{}", "the event, JSON")
	cmd.Flags().BoolVar(&async, "async", false, "queue the invocation (Lambda's Event type) and print its request id only")
	cmd.RunE = r.named(func(cmd *cobra.Command, name string) error {
		if !json.Valid([]byte(payload)) {
			return usagef("--payload must be JSON")
		}
		ctx := cmd.Context()
		c, closeApp, err := r.connect(ctx)
		if err != nil {
			return err
		}
		defer closeApp()
		resp, err := c.InvokeFunction(ctx, name, api.InvokeRequest{Payload: json.RawMessage(payload), Async: async})
		if err != nil {
			return err
		}
		if r.output == "json" {
			if err := writeJSON(r.env.Stdout, resp); err != nil {
				return err
			}
		} else if async {
			fmt.Fprintf(r.env.Stdout, "queued: request %s\n", resp.RequestID)
		} else if resp.Error == nil {
			fmt.Fprintln(r.env.Stdout, strings.TrimSpace(string(resp.Payload)))
		}
		if resp.Error != nil {
			return &exitError{code: exitFailed, msg: fmt.Sprintf("invocation %s failed: %s: %s\n(cairn function logs %s --request-id %s)",
				resp.RequestID, resp.Error.Type, resp.Error.Message, name, resp.RequestID)}
		}
		return nil
	})
	return cmd
}

func (r *runner) functionLogsCommand() *cobra.Command {
	var requestID string
	var limit int
	cmd := &cobra.Command{Use: "logs NAME [--request-id ID] [--limit N]", Short: "Print a function's captured output"}
	cmd.Flags().StringVar(&requestID, "request-id", "", "only the lines of one invocation: its request id, or the RequestId of the custom-resource request it handled (the one a stack's events show)")
	cmd.Flags().IntVar(&limit, "limit", 0, "only the last N lines")
	cmd.RunE = r.named(func(cmd *cobra.Command, name string) error {
		ctx := cmd.Context()
		c, closeApp, err := r.connect(ctx)
		if err != nil {
			return err
		}
		defer closeApp()
		logs, err := c.FunctionLogs(ctx, name, requestID, limit)
		if err != nil {
			return err
		}
		if r.output == "json" {
			return writeJSON(r.env.Stdout, nonNil(logs))
		}
		for _, e := range logs {
			id := e.RequestID
			if id == "" {
				id = "-"
			}
			fmt.Fprintf(r.env.Stdout, "%s %s %s %s\n", e.Time.In(timeZone).Format("2006-01-02T15:04:05.000Z07:00"), id, e.Stream, e.Message)
		}
		return nil
	})
	return cmd
}
