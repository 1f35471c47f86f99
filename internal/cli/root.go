package cli

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cairn-dev/cairn/internal/app"
	"github.com/cairn-dev/cairn/internal/client"
)

// timeZone is where times are shown; tests set UTC.
var timeZone = time.Local

// runner holds the global flags and the environment for every command.
type runner struct {
	env     Env
	server  string
	token   string
	caFile  string
	dir     string
	output  string
	verbose bool
	noColor bool
	// pluginDirs are searched for Terraform providers first, in terraform's mirror layout.
	pluginDirs []string

	inProcess bool        // set by connect
	app       *app.App    // the in-process cairn, set by connect; nil with --server
	cancelled atomic.Bool // an interrupt cancelled the operation followed
	ran       bool        // a command's RunE was entered: errors are no longer usage errors
}

func (r *runner) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "cairn",
		Short: "cairn deploys CloudFormation, ROS and Terraform-language templates to stacks",
		Long: "cairn deploys CloudFormation, ROS and Terraform-language templates to stacks.\n\n" +
			"Commands talk to the server given by --server (or CAIRN_SERVER); without one, they run\n" +
			"cairn in-process on the state in --dir.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       strings.TrimSuffix(buildVersion().text(), "\n"),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.CompletionOptions.DisableDefaultCmd = true // completion.go has its own, with examples
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err.Error()} })
	pf := root.PersistentFlags()
	pf.StringVar(&r.server, "server", "", "base URL of a cairn server (env CAIRN_SERVER); empty: run cairn in-process")
	pf.StringVar(&r.token, "token", "", "API bearer token (env CAIRN_TOKEN); with server: the token to require")
	pf.StringVar(&r.caFile, "ca-file", "", "PEM bundle of the CAs to trust, besides the system's, for an https --server (env CAIRN_CA_FILE)")
	pf.StringVar(&r.dir, "dir", "", "state directory (env CAIRN_DIR; default .cairn)")
	pf.StringVarP(&r.output, "output", "o", "text", "output format: text or json")
	pf.BoolVarP(&r.verbose, "verbose", "v", false, "in-process: log at info level to stderr (default: warnings only)")
	pf.BoolVar(&r.noColor, "no-color", false, "no ANSI colours in text output (also with env NO_COLOR set or TERM=dumb; colours only ever go to a terminal)")
	pf.StringArrayVar(&r.pluginDirs, "plugin-dir", nil, "directory of Terraform provider plugins, searched before terraform's CLI configuration, and of Pulumi plugins, searched before $PULUMI_HOME/plugins (repeatable; env CAIRN_PLUGIN_DIR, colon-separated)")
	root.AddCommand(r.deployCommand(), r.previewCommand(), r.deleteCommand(), r.importCommand(), r.stacksCommand(),
		r.describeCommand(), r.eventsCommand(), r.outputsCommand(), r.validateCommand(), r.serverCommand())
	root.AddCommand(r.cancelCommand())
	root.AddCommand(r.functionCommand())
	root.AddCommand(r.providerCommand())
	root.AddCommand(r.secretsCommand())
	root.AddCommand(r.stateCommand())
	root.AddCommand(r.refreshCommand())
	root.AddCommand(r.kubeCommand())
	root.AddCommand(r.tokenCommand(), r.auditCommand(), r.backupCommand(), r.migrateCommand())
	root.AddCommand(r.initCommand())
	root.AddCommand(r.versionCommand())
	root.AddCommand(r.completionCommand())
	r.completeStacks(root)
	setExamples(root)
	return root
}

// action wraps a command's body: it fills the global flags from the environment, checks
// them, and marks errors from then on as failures rather than usage errors.
func (r *runner) action(fn func(cmd *cobra.Command) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usagef("unexpected argument %q", args[0])
		}
		r.fromEnv(cmd)
		if r.output != "text" && r.output != "json" {
			return usagef("--output must be text or json, not %q", r.output)
		}
		r.ran = true
		return fn(cmd)
	}
}

// stackAction is action for a command that needs --stack and nothing else before it talks to
// cairn: it checks *stack is given, connects, runs fn and closes the connection.
func (r *runner) stackAction(stack *string, fn func(ctx context.Context, c *client.Client) error) func(*cobra.Command, []string) error {
	return r.action(func(cmd *cobra.Command) error {
		if err := required("--stack", *stack); err != nil {
			return err
		}
		ctx := cmd.Context()
		c, closeApp, err := r.connect(ctx)
		if err != nil {
			return err
		}
		defer closeApp()
		return fn(ctx, c)
	})
}

// fromEnv gives flags not set on the command line their environment value or default.
func (r *runner) fromEnv(cmd *cobra.Command) {
	fill := func(flag string, p *string, env, def string) {
		if !cmd.Flags().Changed(flag) {
			if v := r.env.Getenv(env); v != "" {
				*p = v
			}
		}
		if *p == "" {
			*p = def
		}
	}
	fill("server", &r.server, "CAIRN_SERVER", "")
	fill("token", &r.token, "CAIRN_TOKEN", "")
	fill("ca-file", &r.caFile, "CAIRN_CA_FILE", "")
	fill("dir", &r.dir, "CAIRN_DIR", ".cairn")
	if v := r.env.Getenv("CAIRN_PLUGIN_DIR"); v != "" && !cmd.Flags().Changed("plugin-dir") {
		r.pluginDirs = filepath.SplitList(v)
	}
}

// configFlags maps the flags of `cairn server` to the app.Config fields they set; each also
// reads the environment variable envName(flag) when not given.
func configFlags(cfg *app.Config) map[string]*string {
	return map[string]*string{
		"listen": &cfg.Listen, "public-url": &cfg.PublicURL, "tls-listen": &cfg.TLSListen,
		"tls-cert": &cfg.TLSCert, "tls-key": &cfg.TLSKey, "tls-public-url": &cfg.TLSPublicURL,
		"region": &cfg.Region, "account-id": &cfg.AccountID, "secrets-key-file": &cfg.SecretsKeyFile,
		"kube-listen": &cfg.KubeListen, "kube-binary": &cfg.KubeBinary, "database": &cfg.Database,
	}
}

// envTrue reads a boolean environment variable: 1, true, yes or on (any case) is true.
func envTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// envName is the environment variable of a server flag: "public-url" -> CAIRN_PUBLIC_URL.
func envName(flag string) string {
	return "CAIRN_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// inProcessConfig is the configuration of a cairn started in-process: the state in --dir, a
// loopback port, and the server settings the environment gives (CAIRN_PUBLIC_URL, ...).
func (r *runner) inProcessConfig() (app.Config, error) {
	var cfg app.Config
	for flag, p := range configFlags(&cfg) {
		*p = r.env.Getenv(envName(flag))
	}
	if v := r.env.Getenv(envName("service-token-allow")); v != "" {
		cfg.ServiceTokenAllow = []string{v}
	}
	cfg.Dir = r.dir
	cfg.PluginDirs = r.pluginDirs
	cfg.SecretsKey = r.env.Getenv("CAIRN_SECRETS_KEY")
	cfg.AcceptIAMNoop = envTrue(r.env.Getenv(envName("accept-iam-noop")))
	cfg.Listen = "127.0.0.1:0"
	// The same loopback port for every command on this directory: a handler's answer to a
	// request of a run that was killed reaches the next one (app.Config.RememberListen).
	cfg.RememberListen = true
	cfg.InProcess = true // providers and provisioners run in the configuration's directory
	var err error
	if cfg.ResponseNotice, err = responseNotice(r.env.Getenv); err != nil {
		return cfg, err
	}
	level := slog.LevelWarn
	if r.verbose {
		level = slog.LevelInfo
	}
	cfg.Logger = slog.New(slog.NewTextHandler(r.env.Stderr, &slog.HandlerOptions{Level: level}))
	return cfg, nil
}

// responseNotice reads CAIRN_RESPONSE_NOTICE (the in-process form of `cairn server
// --response-notice`); 0 when unset, which means the default.
func responseNotice(getenv func(string) string) (time.Duration, error) {
	v := getenv(envName("response-notice"))
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, usagef("CAIRN_RESPONSE_NOTICE must be a positive duration such as 30s or 2m, not %q", v)
	}
	return d, nil
}

// view renders on stdout in the format --output chose.
func (r *runner) view() view {
	json := r.output == "json"
	return view{w: r.env.Stdout, json: json, colour: !json && r.colour(), loc: timeZone, clock: realClock}
}

// colour reports whether text output may use ANSI colours: stdout is a terminal, and
// neither --no-color, NO_COLOR (any non-empty value, https://no-color.org) nor TERM=dumb
// says otherwise.
func (r *runner) colour() bool {
	if r.noColor || r.env.Getenv("NO_COLOR") != "" || r.env.Getenv("TERM") == "dumb" {
		return false
	}
	return r.env.IsTerminal(r.env.Stdout)
}

// isTerminal reports whether f is a terminal.
func isTerminal(x any) bool {
	f, ok := x.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// interrupted is the error when ctx ends while following an operation.
func (r *runner) interrupted() error {
	msg := "interrupted: the operation goes on (on the server)"
	if r.inProcess {
		msg = "interrupted: the operation goes on (in-process: it resumes the next time cairn runs)"
	}
	return &exitError{code: exitInterrupted, msg: msg}
}
