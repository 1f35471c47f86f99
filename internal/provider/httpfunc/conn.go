package httpfunc

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/cairn-dev/cairn/internal/egress"
)

// DefaultTimeout bounds one call. RFS asks functions to answer within 30 s; cairn allows
// more, since a create may legitimately take longer.
const DefaultTimeout = 5 * time.Minute

// DefaultMaxResponse bounds a response body: terraform's gRPC message limit, in base64.
const DefaultMaxResponse = 256 << 20 * 4 / 3

// Conn sends gRPC calls to an HTTP function. One Conn is one session: the calls of one
// operation, sharing a session id and the configuration captured from Configure.
type Conn struct {
	url         string
	client      *http.Client
	session     string
	timeout     time.Duration
	maxResponse int64

	mu     sync.Mutex
	config []byte // the serialized Configure request, once the provider was configured
}

// Options tune a Conn; zero values mean the defaults.
type Options struct {
	Client      *http.Client
	Timeout     time.Duration
	MaxResponse int64
}

// NewConn returns a connection to the function at base (its URL; calls go to base+Path).
func NewConn(base string, o Options) *Conn {
	if o.Client == nil {
		o.Client = http.DefaultClient
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxResponse <= 0 {
		o.MaxResponse = DefaultMaxResponse
	}
	var id [16]byte
	_, _ = rand.Read(id[:])
	return &Conn{url: strings.TrimSuffix(base, "/") + Path, client: o.Client, timeout: o.Timeout,
		maxResponse: o.MaxResponse, session: fmt.Sprintf("%x-%x-%x-%x-%x", id[0:4], id[4:6], id[6:8], id[8:10], id[10:])}
}

var _ grpc.ClientConnInterface = (*Conn)(nil)

// Invoke sends one call. Failures of the hop (the function unreachable, a status other than
// 200, a malformed or oversized answer, a timeout) come back as gRPC Unavailable errors that
// name the function; an error the function reports comes back as Unknown with its text.
func (c *Conn) Invoke(ctx context.Context, method string, args, reply any, _ ...grpc.CallOption) error {
	in, ok := args.(proto.Message)
	out, ok2 := reply.(proto.Message)
	if !ok || !ok2 {
		return status.Errorf(codes.Internal, "httpfunc: %s: messages must be protocol buffers", method)
	}
	data, err := proto.Marshal(in)
	if err != nil {
		return status.Errorf(codes.Internal, "httpfunc: %s: %v", method, err)
	}
	req := Request{MethodName: method, RequestData: base64.StdEncoding.EncodeToString(data), Context: Context{SessionID: c.session}}
	c.mu.Lock()
	if needsConfig(method) && c.config != nil {
		req.Context.ConfigData = base64.StdEncoding.EncodeToString(c.config)
	}
	c.mu.Unlock()
	resp, err := c.post(ctx, req)
	if err != nil {
		return err
	}
	if resp.Error != "" {
		return status.Errorf(codes.Unknown, "%s", resp.Error)
	}
	raw, err := base64.StdEncoding.DecodeString(resp.ResponseData)
	if err != nil {
		return c.hopError(method, "its response_data is not valid base64: %v", err)
	}
	if err := proto.Unmarshal(raw, out); err != nil {
		return c.hopError(method, "its response_data is not a %s: %v", out.ProtoReflect().Descriptor().FullName(), err)
	}
	if method == methodConfig {
		c.mu.Lock()
		c.config = data
		c.mu.Unlock()
	}
	return nil
}

func (c *Conn) post(ctx context.Context, req Request) (Response, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return Response{}, status.Errorf(codes.Internal, "httpfunc: %v", err)
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return Response{}, status.Errorf(codes.InvalidArgument, "httpfunc: %v", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hresp, err := c.client.Do(hreq)
	if err != nil {
		if parent.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return Response{}, c.hopError(req.MethodName, "it did not answer within %s", c.timeout)
		}
		return Response{}, c.hopError(req.MethodName, "%v", err)
	}
	defer hresp.Body.Close()
	lim := io.LimitReader(hresp.Body, c.maxResponse+1)
	b, err := io.ReadAll(lim)
	if err != nil {
		return Response{}, c.hopError(req.MethodName, "reading its answer: %v", err)
	}
	if int64(len(b)) > c.maxResponse {
		return Response{}, c.hopError(req.MethodName, "its answer is larger than %d bytes", c.maxResponse)
	}
	if hresp.StatusCode != http.StatusOK {
		return Response{}, c.hopError(req.MethodName, "it answered HTTP %d: %s", hresp.StatusCode, snippet(b))
	}
	var resp Response
	if err := json.Unmarshal(b, &resp); err != nil {
		return Response{}, c.hopError(req.MethodName, "its answer is not the {response_data, error} envelope: %v: %s", err, snippet(b))
	}
	return resp, nil
}

func (c *Conn) hopError(method, format string, args ...any) error {
	return status.Errorf(codes.Unavailable, "HTTP function %s, %s: %s", c.url, strings.TrimPrefix(method, service), fmt.Sprintf(format, args...))
}

// NewStream refuses: the envelope carries unary calls only (no tfplugin5 call the client
// makes streams).
func (c *Conn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, status.Error(codes.Unimplemented, "httpfunc: streaming calls cannot travel through an HTTP function")
}

// snippet is what an error quotes of an answer: a short, sanitised excerpt.
func snippet(b []byte) string { return egress.Excerpt(b) }
