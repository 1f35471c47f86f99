package pulumirpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/cairn-dev/cairn/internal/provider"
)

// maxMessage is Pulumi's gRPC message limit on both sides: schemas and states of big providers
// are tens of MB, far over gRPC's 4 MiB default.
const maxMessage = 400 << 20

// Timings of the launch and shutdown sequence (spec §2, §4).
const (
	handshakeRetry   = 10 * time.Millisecond
	handshakeTimeout = 10 * time.Second
	cancelGrace      = 5 * time.Second
	exitGrace        = 5 * time.Second
)

// engineServer is the engine side a provider calls back: Log (into cairn's log, never
// with property values, which providers do not send there anyway) and the root-resource
// pair program SDKs use. Providers also poll grpc.health.v1 on the same address every 5
// minutes and exit when nobody answers.
type engineServer struct {
	pulumirpc.UnimplementedEngineServer
	name string
	log  *slog.Logger
	mu   sync.Mutex
	root string
}

func (e *engineServer) Log(_ context.Context, req *pulumirpc.LogRequest) (*emptypb.Empty, error) {
	if e.log != nil {
		level := slog.LevelInfo
		switch req.GetSeverity() {
		case pulumirpc.LogSeverity_DEBUG:
			level = slog.LevelDebug
		case pulumirpc.LogSeverity_WARNING:
			level = slog.LevelWarn
		case pulumirpc.LogSeverity_ERROR:
			level = slog.LevelError
		}
		e.log.Log(context.Background(), level, req.GetMessage(), "provider", e.name, "urn", req.GetUrn())
	}
	return &emptypb.Empty{}, nil
}

func (e *engineServer) GetRootResource(context.Context, *pulumirpc.GetRootResourceRequest) (*pulumirpc.GetRootResourceResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return &pulumirpc.GetRootResourceResponse{Urn: e.root}, nil
}

func (e *engineServer) SetRootResource(_ context.Context, req *pulumirpc.SetRootResourceRequest) (*pulumirpc.SetRootResourceResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.root = req.GetUrn()
	return &pulumirpc.SetRootResourceResponse{}, nil
}

func (e *engineServer) StartDebugging(context.Context, *pulumirpc.StartDebuggingRequest) (*emptypb.Empty, error) {
	return &emptypb.Empty{}, nil
}

func (e *engineServer) RequirePulumiVersion(context.Context, *pulumirpc.RequirePulumiVersionRequest) (*pulumirpc.RequirePulumiVersionResponse, error) {
	return &pulumirpc.RequirePulumiVersionResponse{}, nil
}

// process is one running provider plugin with the engine endpoint it calls back.
type process struct {
	cmd     *exec.Cmd
	conn    *grpc.ClientConn
	client  pulumirpc.ResourceProviderClient
	engine  *grpc.Server
	address string // the engine address given to the plugin
	output  *tail  // the last lines of its stdout and stderr, for crash reports
	exited  chan struct{}
	exitErr error
	// cancelOnce: Cancel is sent once when a call's context ends (cancel.go); close sends
	// it again, as Pulumi does before it stops a plugin.
	cancelOnce sync.Once
	closeMu    sync.Mutex
	isClosed   bool
}

// start serves the engine side on a fresh loopback port, execs the plugin with that address as
// its only argument (flags would make Go providers exit) in its own process group, reads the
// port it prints and dials it.
func start(opts Options, env []string) (*process, error) {
	name, executable, log := opts.Package, opts.Executable, opts.Log
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("provider %s: cannot listen for the engine service: %w", name, err)
	}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(maxMessage), grpc.MaxSendMsgSize(maxMessage))
	pulumirpc.RegisterEngineServer(srv, &engineServer{name: name, log: log})
	healthpb.RegisterHealthServer(srv, health.NewServer()) // "" is SERVING by default
	go func() { _ = srv.Serve(lis) }()

	p := &process{engine: srv, address: lis.Addr().String(), output: &tail{}, exited: make(chan struct{})}
	cmd := exec.Command(executable, p.address)
	cmd.Dir = opts.Dir
	cmd.Env = env
	setProcAttr(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		srv.Stop()
		return nil, err
	}
	cmd.Stderr = &lineLog{tail: p.output, log: log, name: name}
	if err := cmd.Start(); err != nil {
		srv.Stop()
		return nil, fmt.Errorf("provider %s: cannot start %s: %w", name, executable, err)
	}
	p.cmd = cmd
	port, err := readPort(stdout)
	// Later stdout lines are the plugin's log, not protocol: drain them.
	go func() {
		_, _ = io.Copy(&lineLog{tail: p.output, log: log, name: name}, stdout)
		p.exitErr = cmd.Wait()
		close(p.exited)
	}()
	if err != nil {
		p.kill()
		<-p.exited
		srv.Stop() // the engine service lives with the plugin
		return nil, fmt.Errorf("provider %s: %s did not print its port: %w (%v)%s", name, executable, err, p.exitErr, p.output.suffix())
	}
	dial := append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessage), grpc.MaxCallSendMsgSize(maxMessage))},
		grpcLogOption(opts.GRPCLog, name, executable)...)
	conn, err := grpc.NewClient("127.0.0.1:"+strconv.Itoa(port), dial...)
	if err != nil {
		p.kill()
		<-p.exited
		srv.Stop()
		return nil, fmt.Errorf("provider %s: %w", name, err)
	}
	p.conn = conn
	p.client = pulumirpc.NewResourceProviderClient(conn)
	return p, nil
}

// readPort reads the first stdout line byte by byte (buffering would swallow log lines that
// follow it) and parses it as a port.
func readPort(r io.Reader) (int, error) {
	var line []byte
	b := make([]byte, 1)
	for {
		n, err := r.Read(b)
		if n == 1 {
			if b[0] == '\n' {
				break
			}
			line = append(line, b[0])
			if len(line) > 64 {
				return 0, fmt.Errorf("first line %q is not a port", line)
			}
		}
		if err != nil {
			return 0, fmt.Errorf("plugin exited: %w", err)
		}
	}
	port, err := strconv.Atoi(strings.TrimSpace(string(line)))
	if err != nil || port < 1 || port > 65535 {
		return 0, fmt.Errorf("first line %q is not a port", line)
	}
	return port, nil
}

// handshake negotiates the protocol flags, retrying while the plugin is not listening yet.
// A plugin built before Handshake existed (Unimplemented) returns legacy=true: its flags come
// from Configure instead.
func (p *process) handshake(ctx context.Context, dir string) (resp *pulumirpc.ProviderHandshakeResponse, legacy bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	req := &pulumirpc.ProviderHandshakeRequest{
		EngineAddress:     p.address,
		RootDirectory:     &dir,
		ProgramDirectory:  &dir,
		ConfigureWithUrn:  true,
		InvokeWithPreview: true,
		AcceptsByteString: true, // bytestrings.go
	}
	for {
		resp, err = p.client.Handshake(ctx, req)
		switch status.Code(err) {
		case codes.OK:
			return resp, false, nil
		case codes.Unimplemented:
			return nil, true, nil
		case codes.Unavailable:
			select {
			case <-ctx.Done():
				return nil, false, fmt.Errorf("the plugin did not answer Handshake within %s: %w", handshakeTimeout, err)
			case <-p.exited:
				return nil, false, fmt.Errorf("the plugin exited during Handshake (%v)%s", p.exitErr, p.output.suffix())
			case <-time.After(handshakeRetry):
			}
		default:
			return nil, false, fmt.Errorf("Handshake: %w", err)
		}
	}
}

// close stops the plugin the way Pulumi does: Cancel (advisory), close the connection, SIGINT
// to the process group, SIGKILL after a grace period. It then stops the engine endpoint.
func (p *process) close() error {
	p.closeMu.Lock()
	defer p.closeMu.Unlock()
	if p.isClosed {
		return nil
	}
	p.isClosed = true
	if p.client != nil {
		ctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
		_, _ = p.client.Cancel(ctx, &emptypb.Empty{})
		cancel()
	}
	if p.conn != nil {
		_ = p.conn.Close()
	}
	p.signal(syscall.SIGINT)
	select {
	case <-p.exited:
	case <-time.After(exitGrace):
		p.kill()
		<-p.exited
	}
	p.engine.Stop()
	var exit *exec.ExitError
	if p.exitErr != nil && !errors.As(p.exitErr, &exit) {
		return p.exitErr
	}
	return nil
}

func (p *process) signal(sig syscall.Signal) {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	if err := syscall.Kill(-p.cmd.Process.Pid, sig); err != nil {
		_ = p.cmd.Process.Signal(sig)
	}
}

func (p *process) kill() { p.signal(syscall.SIGKILL) }

// crashed adds the plugin's exit and last output to err when the plugin is gone, so an
// unexpected exit is reported as the provider's failure with what it said.
func (p *process) crashed(err error) error {
	select {
	case <-p.exited:
		return fmt.Errorf("%w (the provider plugin exited: %v)%s", err, p.exitErr, p.output.suffix())
	default:
		return err
	}
}

// tail keeps the last lines a plugin wrote.
type tail struct {
	mu    sync.Mutex
	lines []string
}

const tailLines = 20

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > tailLines {
		t.lines = t.lines[len(t.lines)-tailLines:]
	}
}

func (t *tail) suffix() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return ""
	}
	return "\n" + strings.Join(t.lines, "\n")
}

// lineLog writes a plugin's output lines to the log at debug level and into its tail.
// maxLogLine bounds one line of a plugin's output.
const maxLogLine = 64 << 10

type lineLog struct {
	tail *tail
	log  *slog.Logger
	name string
	buf  []byte
	mu   sync.Mutex
}

func (l *lineLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, b...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 && len(l.buf) > maxLogLine { // a plugin that never ends its line is cut, not buffered without bound
			i = maxLogLine
		}
		if i < 0 {
			break
		}
		line := strings.TrimRight(string(l.buf[:i]), "\r")
		l.buf = l.buf[min(i+1, len(l.buf)):]
		l.tail.add(line)
		if l.log != nil {
			l.log.Debug(line, "provider", l.name)
		}
	}
	return len(b), nil
}

// pluginEnv is cairn's environment without cairn's own settings (provider.WithoutCairnEnv),
// plus what Pulumi gives a provider: the project and the stack configuration of its package
// (JSON object of strings).
func pluginEnv(project, configJSON string) []string {
	env := provider.WithoutCairnEnv(os.Environ())
	if project != "" {
		env = append(env, "PULUMI_PROJECT="+project)
	}
	if configJSON != "" {
		env = append(env, "PULUMI_CONFIG="+configJSON)
	}
	return env
}

func binDir(executable string) string {
	d, err := filepath.Abs(filepath.Dir(executable))
	if err != nil {
		return filepath.Dir(executable)
	}
	return d
}
