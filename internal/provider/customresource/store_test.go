package customresource

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
)

// memStore is an in-memory Store.
type memStore struct {
	mu   sync.Mutex
	rows map[string]Request
}

var _ Store = (*memStore)(nil)

func newMemStore() *memStore { return &memStore{rows: map[string]Request{}} }

func (s *memStore) PutRequest(_ context.Context, r Request) (Request, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.rows[r.ID]; ok {
		return clone(old), false, nil
	}
	s.rows[r.ID] = clone(r)
	return clone(r), true, nil
}

func (s *memStore) MarkSent(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rows[id]
	if !ok {
		return fmt.Errorf("mark %s: %w", id, ErrNotFound)
	}
	r.Sent = true
	s.rows[id] = r
	return nil
}

func (s *memStore) GetRequest(_ context.Context, id string) (Request, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rows[id]
	if !ok {
		return Request{}, fmt.Errorf("get %s: %w", id, ErrNotFound)
	}
	return clone(r), nil
}

func (s *memStore) SaveResponse(_ context.Context, id string, body []byte, at time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rows[id]
	if !ok {
		return false, fmt.Errorf("save %s: %w", id, ErrNotFound)
	}
	if r.Response != nil {
		return false, nil
	}
	r.Response, r.RespondedAt = slices.Clone(body), at
	s.rows[id] = r
	return true, nil
}

// response returns the stored response of id (nil if none).
func (s *memStore) response(t *testing.T, id string) []byte {
	t.Helper()
	r, err := s.GetRequest(context.Background(), id)
	if err != nil {
		t.Fatalf("GetRequest(%s): %v", id, err)
	}
	return r.Response
}

func clone(r Request) Request {
	r.Body, r.Response = slices.Clone(r.Body), slices.Clone(r.Response)
	return r
}

// rig is a Provider whose ResponseHandler is served by an httptest server, over an
// in-memory store, with a fixed clock (so ResponseURLs are predictable).
type rig struct {
	t     *testing.T
	p     *Provider
	store *memStore
	srv   *httptest.Server
}

var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newRig(t *testing.T) *rig {
	t.Helper()
	store := newMemStore()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p := New(Config{Store: store, Key: []byte("test-key"), ResponseURL: srv.URL + "/", Client: srv.Client(),
		Now: func() time.Time { return testNow }})
	p.poll, p.maxPoll, p.backoff = 20*time.Millisecond, 50*time.Millisecond, time.Millisecond
	t.Cleanup(func() { p.Close() })
	mux.Handle("/v1/responses/", p.ResponseHandler())
	return &rig{t: t, p: p, store: store, srv: srv}
}

// handle mounts h at path on the rig's server and returns its URL. A fakeHandler's
// responses are all sent before the test ends.
func (r *rig) handle(path string, h http.Handler) string {
	if f, ok := h.(*fakeHandler); ok {
		r.t.Cleanup(f.putsDone.Wait)
	}
	r.srv.Config.Handler.(*http.ServeMux).Handle(path, h)
	return r.srv.URL + path
}

// put sends body to url with method and returns the status and decoded JSON answer.
func put(t *testing.T, method, url, body string) (int, map[string]string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]string
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s %s: answer %q is not a JSON object: %v", method, url, b, err)
	}
	return resp.StatusCode, out
}

// cfnResource and rosResource are the resources most tests use.
var (
	cfnResource = provider.Resource{StackName: "s", StackID: "arn:aws:cloudformation:us-east-1:123456789012:stack/s/guid",
		Name: "Thing", Type: "Custom::Thing", Dialect: "cloudformation", Region: "us-east-1", AccountID: "123456789012"}
	rosResource = provider.Resource{StackName: "s", StackID: "7f0d3c2e-0000-4000-8000-000000000001",
		Name: "Thing", Type: "ALIYUN::ROS::CustomResource", Dialect: "ros", Region: "cn-hangzhou", AccountID: "1234567890"}
)

// obj builds an object value.
func obj(attrs map[string]cty.Value) cty.Value { return cty.ObjectVal(attrs) }
