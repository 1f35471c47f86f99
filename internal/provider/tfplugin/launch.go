package tfplugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/cairn-dev/cairn/internal/provider"
)

// handshake is terraform's. Every Terraform/OpenTofu provider checks the cookie and refuses to
// run without it; ProtocolVersion is the legacy fallback terraform declares (VersionedPlugins
// take precedence).
var handshake = plugin.HandshakeConfig{
	ProtocolVersion:  4,
	MagicCookieKey:   "TF_PLUGIN_MAGIC_COOKIE",
	MagicCookieValue: "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2",
}

// Protocols are the tfplugin protocol versions cairn speaks to providers, offered in this
// order (`cairn version` shows them).
var Protocols = []int{5, 6}

// maxMessage is terraform's gRPC message limit (gRPC's default is 4 MiB): a large state or
// schema travels as one message.
const maxMessage = 256 << 20

// rawConn is the go-plugin plugin for both protocol versions: it hands back the gRPC
// connection itself, because cairn's adapters work on any grpc.ClientConnInterface.
type rawConn struct{ plugin.NetRPCUnsupportedPlugin }

func (rawConn) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error {
	return errors.New("tfplugin: cairn only implements the client side")
}

func (rawConn) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	return cc, nil
}

// CleanupClients kills every provider process this package started and has not closed yet
// (go-plugin's managed clients). cmd/cairn calls it on its way out, so no provider outlives a
// normal exit or a handled signal; for kill -9 see setPdeathsig.
func CleanupClients() { plugin.CleanupClients() }

// process is one running provider plugin.
type process struct {
	client  *plugin.Client
	conn    *grpc.ClientConn
	version int
	stderr  *tail
}

// launch starts the provider binary the way terraform does and completes the go-plugin
// handshake: versions 5 and 6 offered, gRPC only, AutoMTLS, managed (so CleanupClients kills
// it), terraform's message size limit. The provider's log (hclog JSON on stderr) goes to log
// at debug level; the last lines of its stderr are kept for the error when it crashes.
// extraEnv is added to the environment (after cairn's own CAIRN_* variables are removed).
func launch(name, executable, dir string, extraEnv []string, log *slog.Logger, versions ...int) (*process, error) {
	if len(versions) == 0 {
		versions = Protocols
	}
	plugins := map[int]plugin.PluginSet{}
	for _, v := range versions {
		plugins[v] = plugin.PluginSet{"provider": rawConn{}}
	}
	cmd := exec.Command(executable)
	cmd.Dir = dir
	setPdeathsig(cmd)
	stderr := &tail{}
	debug := log != nil && log.Enabled(context.Background(), slog.LevelDebug)
	level := hclog.Off
	if debug {
		level = hclog.Debug
	}
	cmd.Env = append(pluginEnv(os.Environ(), debug), extraEnv...)
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  handshake,
		VersionedPlugins: plugins,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Managed:          true,
		Cmd:              cmd,
		AutoMTLS:         true,
		Stderr:           stderr, // the process's own stderr: panics and early failures
		SyncStderr:       io.MultiWriter(stderr, &lineLog{log: log, name: name}),
		SyncStdout:       io.Discard,
		GRPCDialOptions: []grpc.DialOption{grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(maxMessage), grpc.MaxCallSendMsgSize(maxMessage))},
		Logger: hclog.New(&hclog.LoggerOptions{Name: "provider", Output: &hclogBridge{log: log, name: name},
			Level: level, JSONFormat: true}),
	})
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		return nil, fmt.Errorf("provider %s: cannot start %s: %w%s", name, executable, err, stderr.suffix())
	}
	raw, err := rpc.Dispense("provider")
	if err != nil {
		client.Kill()
		return nil, fmt.Errorf("provider %s: %w%s", name, err, stderr.suffix())
	}
	v := client.NegotiatedVersion()
	if _, ok := plugins[v]; !ok {
		client.Kill()
		return nil, fmt.Errorf("provider %s: %s speaks plugin protocol %d; wanted %v", name, executable, v, versions)
	}
	cc, ok := raw.(*grpc.ClientConn)
	if !ok {
		client.Kill()
		return nil, fmt.Errorf("provider %s: unexpected plugin client %T", name, raw)
	}
	if log != nil {
		log.Debug("provider started", "provider", name, "executable", executable, "protocol", v, "pid", client.ID())
	}
	return &process{client: client, conn: cc, version: v, stderr: stderr}, nil
}

// Process is a provider plugin started as terraform starts it, for callers that speak the
// protocol themselves (cairn provider serve forwards raw gRPC calls to it).
type Process struct{ p *process }

// Launch starts the provider binary at executable, offering the given protocol versions (5
// and 6 when none are given). The caller must Kill it.
func Launch(name, executable string, log *slog.Logger, versions ...int) (*Process, error) {
	p, err := launch(name, executable, "", nil, log, versions...)
	if err != nil {
		return nil, err
	}
	return &Process{p}, nil
}

// Conn is the gRPC connection to the plugin.
func (p *Process) Conn() *grpc.ClientConn { return p.p.conn }

// Version is the negotiated protocol version.
func (p *Process) Version() int { return p.p.version }

// Stderr is the last lines the plugin wrote to stderr, for error messages ("" if none).
func (p *Process) Stderr() string { return p.p.stderr.suffix() }

// Kill stops the plugin (gracefully through go-plugin, then by force).
func (p *Process) Kill() { p.p.client.Kill() }

// hclogBridge receives go-plugin's log (and, through it, the provider's JSON log lines from
// stderr) as hclog JSON and passes each entry to cairn's slog logger at debug level.
type hclogBridge struct {
	log  *slog.Logger
	name string
}

func (w *hclogBridge) Write(p []byte) (int, error) {
	if w.log == nil {
		return len(p), nil
	}
	for _, line := range bytes.Split(bytes.TrimSpace(p), []byte("\n")) {
		var entry map[string]any
		if json.Unmarshal(line, &entry) != nil {
			w.log.Debug(string(line), "provider", w.name)
			continue
		}
		msg, _ := entry["@message"].(string)
		args := []any{"provider", w.name}
		if lvl, ok := entry["@level"].(string); ok {
			args = append(args, "level", lvl)
		}
		for k, v := range entry {
			if !strings.HasPrefix(k, "@") {
				args = append(args, k, v)
			}
		}
		w.log.Debug(msg, args...)
	}
	return len(p), nil
}

// lineLog logs what the provider writes to its (go-plugin forwarded) stderr, line by line.
type lineLog struct {
	log  *slog.Logger
	name string
}

func (w *lineLog) Write(p []byte) (int, error) {
	if w.log != nil {
		for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
			w.log.Debug("provider stderr", "provider", w.name, "line", l)
		}
	}
	return len(p), nil
}

// tail keeps the last lines a provider wrote to stderr, for the error when it crashes.
type tail struct {
	mu      sync.Mutex
	lines   []string
	partial string
}

const (
	tailLines   = 20
	tailLineMax = 1000
)

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	parts := strings.Split(t.partial+string(p), "\n")
	t.partial = parts[len(parts)-1]
	if len(t.partial) > tailLineMax { // a line that never ends is kept cut, not buffered without bound
		t.partial = t.partial[:tailLineMax]
	}
	for _, l := range parts[:len(parts)-1] {
		if len(l) > tailLineMax {
			l = l[:tailLineMax] + "…"
		}
		t.lines = append(t.lines, l)
	}
	if len(t.lines) > tailLines {
		t.lines = append([]string(nil), t.lines[len(t.lines)-tailLines:]...)
	}
	return len(p), nil
}

// suffix is the tail for an error message, "" when the provider wrote nothing.
func (t *tail) suffix() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines
	if t.partial != "" {
		lines = append(append([]string(nil), lines...), t.partial)
	}
	if len(lines) == 0 {
		return ""
	}
	return "\nlast lines of the provider's stderr:\n" + strings.Join(lines, "\n")
}

// pluginEnv is a plugin process's environment: never cairn's own CAIRN_* variables (tokens,
// the secrets key), and, unless cairn logs at debug level, the SDKs' logging turned off.
func pluginEnv(environ []string, debug bool) []string {
	env := provider.WithoutCairnEnv(environ)
	if !debug {
		env = quietSDK(env)
	}
	return env
}

// quietSDK turns off the provider SDKs' own logging (terraform-plugin-go, -framework and
// -sdk/v2 log every RPC at TRACE unless told otherwise: megabytes per thousand resources that
// the plugin writes and cairn would parse only to drop) when the user asked for none. A
// provider's own log and its crash output are untouched.
func quietSDK(env []string) []string {
	for _, kv := range env {
		if strings.HasPrefix(kv, "TF_LOG") {
			return env // the user wants logs: the provider decides
		}
	}
	return append(env, "TF_LOG_SDK=OFF", "TF_LOG_SDK_PROTO=OFF", "TF_LOG_SDK_FRAMEWORK=OFF",
		"TF_LOG_SDK_HELPER_SCHEMA=OFF", "TF_LOG_SDK_HELPER_RESOURCE=OFF")
}
