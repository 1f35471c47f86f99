package httpfunc

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/cairn-dev/cairn/internal/provider/tfplugin"
	tf5 "github.com/cairn-dev/cairn/internal/tfplugin5"
)

// MaxRequest bounds a request body.
const MaxRequest = 256 << 20 * 4 / 3

// Server is an HTTP function serving a Terraform provider binary over the envelope. As RFS
// recommends, every request gets a fresh provider process, configured from config_data
// first; a small pool of processes started ahead keeps the launch off the request's path.
type Server struct {
	Executable string
	Log        *slog.Logger
	pool       chan *tfplugin.Process
	warm       chan struct{}

	// Reuse keeps one configured process per session and configuration instead of a fresh
	// one per request: much faster, but not the process model RFS recommends.
	Reuse    bool
	mu       sync.Mutex
	sessions map[string]*session
}

// session is a process kept for the calls of one session (Reuse).
type session struct {
	once sync.Once
	// under Server.mu:
	p        *tfplugin.Process
	err      error
	ready    bool      // once has run
	inflight int       // calls running
	last     time.Time // when the last call ended
}

// NewServer returns a server for the provider at executable with warm processes started
// ahead (0: none).
func NewServer(executable string, warm int, log *slog.Logger) *Server {
	s := &Server{Executable: executable, Log: log, pool: make(chan *tfplugin.Process, warm), warm: make(chan struct{}, warm)}
	for range warm {
		s.refill()
	}
	return s
}

// Close kills the warm processes and the sessions' processes.
func (s *Server) Close() {
	s.mu.Lock()
	for k, ss := range s.sessions {
		if ss.p != nil {
			ss.p.Kill()
		}
		delete(s.sessions, k)
	}
	s.mu.Unlock()
	for {
		select {
		case p := <-s.pool:
			p.Kill()
		default:
			return
		}
	}
}

func (s *Server) refill() {
	select {
	case s.warm <- struct{}{}:
	default:
		return // enough launches under way
	}
	go func() {
		defer func() { <-s.warm }()
		p, err := s.launch()
		if err != nil {
			return // the request that needs it launches its own and reports the error
		}
		select {
		case s.pool <- p:
		default:
			p.Kill()
		}
	}()
}

func (s *Server) launch() (*tfplugin.Process, error) {
	return tfplugin.Launch("provider", s.Executable, s.Log, 5)
}

// fresh returns an unused process: a warm one, or a new one.
func (s *Server) fresh() (*tfplugin.Process, error) {
	defer s.refill()
	select {
	case p := <-s.pool:
		return p, nil
	default:
		return s.launch()
	}
}

// ServeHTTP answers POST /provider. A malformed envelope is a 400; a provider that cannot
// start or a call that fails in transport is a 200 whose error says so (the RFS contract:
// the error field carries the gRPC call's error).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != Path {
		http.Error(w, `{"error":"not found: calls go to POST /provider"}`, http.StatusNotFound)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, `{"error":"only POST is allowed"}`, http.StatusMethodNotAllowed)
		return
	}
	var req Request
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequest))
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		badRequest(w, "the body is not a {method_name, request_data, context} envelope: "+err.Error())
		return
	}
	data, err := base64.StdEncoding.DecodeString(req.RequestData)
	if err != nil {
		badRequest(w, "request_data is not valid base64: "+err.Error())
		return
	}
	if req.MethodName != methodShutdwn && (!strings.HasPrefix(req.MethodName, service) || len(req.MethodName) == len(service)) {
		badRequest(w, fmt.Sprintf("method_name %q is not a /tfplugin5.Provider/ method", req.MethodName))
		return
	}
	var config []byte
	if req.Context.ConfigData != "" && needsConfig(req.MethodName) {
		if config, err = base64.StdEncoding.DecodeString(req.Context.ConfigData); err != nil {
			badRequest(w, "context.config_data is not valid base64: "+err.Error())
			return
		}
	}
	var out []byte
	if s.Reuse && req.MethodName != methodShutdwn {
		out, err = s.callInSession(r.Context(), req, data, config)
	} else {
		out, err = s.call(r.Context(), req.MethodName, data, config)
	}
	resp := Response{ResponseData: base64.StdEncoding.EncodeToString(out)}
	if err != nil {
		resp = Response{Error: err.Error()}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

func badRequest(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(Response{Error: msg})
}

// call runs one method on a fresh provider process, configured first when config is set.
func (s *Server) call(ctx context.Context, method string, data, config []byte) ([]byte, error) {
	if method == methodShutdwn {
		return nil, nil // every process ends with its request: nothing to shut down
	}
	p, err := s.fresh()
	if err != nil {
		return nil, err
	}
	defer p.Kill()
	if config != nil {
		if err := configure(ctx, p, config); err != nil {
			return nil, err
		}
	}
	var out []byte
	if err := invokeRaw(ctx, p.Conn(), method, data, &out); err != nil {
		return nil, fmt.Errorf("%w%s", err, p.Stderr())
	}
	return out, nil
}

// sessionIdle is how long a reused process waits for its session's next call.
const sessionIdle = time.Minute

// callInSession runs one method on the session's process, started and configured on the
// session's first call with this configuration.
func (s *Server) callInSession(ctx context.Context, req Request, data, config []byte) ([]byte, error) {
	key := req.Context.SessionID + "\x00" + string(config)
	s.mu.Lock()
	if s.sessions == nil {
		s.sessions = map[string]*session{}
	}
	now := time.Now()
	for k, old := range s.sessions { // end sessions idle for a while, never one with a call running
		if old.ready && old.inflight == 0 && now.Sub(old.last) > sessionIdle {
			if old.p != nil {
				old.p.Kill()
			}
			delete(s.sessions, k)
		}
	}
	ss, ok := s.sessions[key]
	if !ok {
		ss = &session{}
		s.sessions[key] = ss
	}
	ss.inflight++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		ss.inflight--
		ss.last = time.Now()
		s.mu.Unlock()
	}()
	ss.once.Do(func() {
		p, err := s.fresh()
		if err == nil && config != nil {
			if err = configure(ctx, p, config); err != nil {
				p.Kill()
			}
		}
		s.mu.Lock()
		ss.p, ss.err, ss.ready = p, err, true
		if err != nil && s.sessions[key] == ss {
			delete(s.sessions, key) // the next call of the session tries again
		}
		s.mu.Unlock()
	})
	s.mu.Lock()
	p, err := ss.p, ss.err
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	var out []byte
	if err := invokeRaw(ctx, p.Conn(), req.MethodName, data, &out); err != nil {
		return nil, fmt.Errorf("%w%s", err, p.Stderr())
	}
	return out, nil
}

// configure calls Configure on p with config_data.
func configure(ctx context.Context, p *tfplugin.Process, config []byte) error {
	creq, err := configureRequest(config)
	if err != nil {
		return err
	}
	var cresp []byte
	if err := invokeRaw(ctx, p.Conn(), methodConfig, creq, &cresp); err != nil {
		return fmt.Errorf("configuring the provider from config_data: %w%s", err, p.Stderr())
	}
	var parsed tf5.Configure_Response
	if err := proto.Unmarshal(cresp, &parsed); err == nil {
		for _, d := range parsed.Diagnostics {
			if d.Severity == tf5.Diagnostic_ERROR {
				return fmt.Errorf("configuring the provider from config_data: %s: %s", d.Summary, d.Detail)
			}
		}
	}
	return nil
}

// configureRequest reads config_data: a serialized Configure request (what cairn sends), or
// else a DynamicValue, or else raw msgpack of the provider block — the digest's readings
// (a), (b) and (c) of an encoding RFS leaves open.
func configureRequest(b []byte) ([]byte, error) {
	var req tf5.Configure_Request
	if err := proto.Unmarshal(b, &req); err == nil && req.Config != nil && (len(req.Config.Msgpack) > 0 || len(req.Config.Json) > 0) {
		return b, nil
	}
	var dv tf5.DynamicValue
	if err := proto.Unmarshal(b, &dv); err != nil || (len(dv.Msgpack) == 0 && len(dv.Json) == 0) {
		dv = tf5.DynamicValue{Msgpack: b}
	}
	return proto.Marshal(&tf5.Configure_Request{TerraformVersion: tfplugin.TerraformVersion, Config: &dv})
}

// rawCodec passes serialized messages through untouched: the server forwards bytes it
// never needs to understand.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *v.(*[]byte), nil }
func (rawCodec) Unmarshal(b []byte, v any) error {
	*v.(*[]byte) = append([]byte(nil), b...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

func invokeRaw(ctx context.Context, cc *grpc.ClientConn, method string, in []byte, out *[]byte) error {
	return cc.Invoke(ctx, method, &in, out, grpc.ForceCodec(rawCodec{}),
		grpc.MaxCallRecvMsgSize(256<<20), grpc.MaxCallSendMsgSize(256<<20))
}
