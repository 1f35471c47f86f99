package tfplugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// handshake is terraform's: every Terraform/OpenTofu provider checks this cookie.
var handshake = plugin.HandshakeConfig{
	ProtocolVersion:  4, // the legacy fallback terraform declares; VersionedPlugins win
	MagicCookieKey:   "TF_PLUGIN_MAGIC_COOKIE",
	MagicCookieValue: "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2",
}

// maxMessage is terraform's gRPC message limit: big states travel in one message.
const maxMessage = 256 << 20

// grpcPlugin hands back the raw connection: cairn's client works on grpc.ClientConnInterface.
type grpcPlugin struct{ plugin.Plugin }

func (grpcPlugin) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error {
	return errors.New("tfplugin: cairn only implements the client side")
}

func (grpcPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	return cc, nil
}

// CleanupClients kills every plugin process started by this package (go-plugin's managed
// clients). Call it before exiting.
func CleanupClients() { plugin.CleanupClients() }

// process is one running provider plugin.
type process struct {
	client *plugin.Client
	conn   *conn
	stderr *tail
}

// launch starts the provider binary and completes the handshake.
func launch(name, executable string, log *slog.Logger) (*process, error) {
	cmd := exec.Command(executable)
	setPdeathsig(cmd) // the kernel kills the plugin if cairn dies, even by kill -9
	stderr := &tail{}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig: handshake,
		VersionedPlugins: map[int]plugin.PluginSet{
			5: {"provider": grpcPlugin{}},
			6: {"provider": grpcPlugin{}},
		},
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Managed:          true,
		Cmd:              cmd,
		AutoMTLS:         true,
		SyncStderr:       stderr,
		SyncStdout:       io.Discard,
		GRPCDialOptions: []grpc.DialOption{grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(maxMessage), grpc.MaxCallSendMsgSize(maxMessage))},
		Logger: hclog.New(&hclog.LoggerOptions{Name: "provider." + name, Output: logWriter{log, name}, Level: hclog.Debug, JSONFormat: true}),
	})
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		return nil, fmt.Errorf("provider %s: cannot start %s: %w%s", name, executable, err, stderr.suffix())
	}
	raw, err := rpc.Dispense("provider")
	if err != nil {
		client.Kill()
		return nil, fmt.Errorf("provider %s: %w", name, err)
	}
	v := client.NegotiatedVersion()
	if v != 5 && v != 6 {
		client.Kill()
		return nil, fmt.Errorf("provider %s speaks plugin protocol %d; cairn speaks 5 and 6", name, v)
	}
	return &process{client: client, conn: &conn{cc: raw.(*grpc.ClientConn), version: v}, stderr: stderr}, nil
}

// logWriter passes go-plugin's and the provider's log lines to cairn's logger at debug.
type logWriter struct {
	log  *slog.Logger
	name string
}

func (w logWriter) Write(p []byte) (int, error) {
	if w.log != nil {
		w.log.Debug("provider log", "provider", w.name, "line", strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

// tail keeps the last lines a provider wrote to stderr, for the error when it crashes.
type tail struct {
	mu    sync.Mutex
	lines []string
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		t.lines = append(t.lines, l)
	}
	if len(t.lines) > 20 {
		t.lines = t.lines[len(t.lines)-20:]
	}
	return len(p), nil
}

func (t *tail) suffix() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return ""
	}
	return "\nprovider stderr:\n" + strings.Join(t.lines, "\n")
}
