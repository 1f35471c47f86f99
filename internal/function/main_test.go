package function

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

// TestMain doubles as a `provided` bootstrap: a function whose bootstrap script runs this test
// binary with _HANDLER=test:MODE serves invocations with aws-lambda-go's real Runtime API
// client, so the tests check cairn against the client Lambda users run.
func TestMain(m *testing.M) {
	if os.Getenv("AWS_LAMBDA_RUNTIME_API") != "" {
		if mode, ok := strings.CutPrefix(os.Getenv("_HANDLER"), "test:"); ok {
			lambda.Start(testHandler(mode))
			return
		}
	}
	os.Exit(m.Run())
}

type testEvent struct {
	Sleep int    `json:"sleep"` // milliseconds
	Say   string `json:"say"`
	Times int    `json:"times"` // how many times to print Say (default once)
}

func testHandler(mode string) func(context.Context, testEvent) (map[string]any, error) {
	return func(ctx context.Context, ev testEvent) (map[string]any, error) {
		lc, _ := lambdacontext.FromContext(ctx)
		deadline, _ := ctx.Deadline()
		for i := 0; ev.Say != "" && (i == 0 || i < ev.Times); i++ {
			fmt.Println(ev.Say)
		}
		switch mode {
		case "hang":
			select {}
		case "crash":
			fmt.Fprintln(os.Stderr, "about to crash")
			os.Exit(3)
		case "panic":
			panic("boom")
		case "error":
			return nil, errors.New("handler failed")
		case "alloc":
			b := make([]byte, 512<<20) // over any memory limit the tests set
			for i := range b {
				b[i] = 1
			}
			return map[string]any{"len": len(b)}, nil
		}
		time.Sleep(time.Duration(ev.Sleep) * time.Millisecond)
		env := map[string]string{}
		for _, k := range []string{"AWS_LAMBDA_FUNCTION_NAME", "AWS_LAMBDA_FUNCTION_VERSION", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE",
			"AWS_LAMBDA_LOG_STREAM_NAME", "AWS_LAMBDA_LOG_GROUP_NAME", "AWS_REGION", "LAMBDA_TASK_ROOT", "_HANDLER", "TZ",
			"_X_AMZN_TRACE_ID", "EXTRA"} {
			env[k] = os.Getenv(k)
		}
		return map[string]any{"requestId": lc.AwsRequestID, "arn": lc.InvokedFunctionArn, "deadlineIn": time.Until(deadline).Milliseconds(),
			"env": env, "pid": os.Getpid(), "cwd": must(os.Getwd())}, nil
	}
}

func must[T any](v T, _ error) T { return v }

// memStore is an in-memory Store, keyed by Definition.key (tenant and name).
type memStore struct {
	mu sync.Mutex
	m  map[string]Definition
}

func (s *memStore) PutFunction(_ context.Context, d Definition) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[d.key()]; ok {
		return fmt.Errorf("function %s: %w", d.Name, ErrExists)
	}
	s.m[d.key()] = d
	return nil
}

func (s *memStore) ReplaceFunction(_ context.Context, d Definition) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[d.key()]; !ok {
		return fmt.Errorf("function %s: %w", d.Name, ErrNotFound)
	}
	s.m[d.key()] = d
	return nil
}

func (s *memStore) FunctionCode(_ context.Context, tenant, name string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.m[Definition{Tenant: tenant, Name: name}.key()]
	if !ok {
		return nil, fmt.Errorf("function %s: %w", name, ErrNotFound)
	}
	return d.Code, nil
}

func (s *memStore) GetFunction(_ context.Context, tenant, name string) (Definition, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.m[Definition{Tenant: tenant, Name: name}.key()]
	if !ok {
		return Definition{}, fmt.Errorf("function %s: %w", name, ErrNotFound)
	}
	d.Code = nil // as a real store: only FunctionCode reads it
	return d, nil
}

func (s *memStore) ListFunctions(_ context.Context, tenant string) ([]Definition, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Definition
	for _, d := range s.m {
		if d.Tenant == tenant {
			out = append(out, d)
		}
	}
	return out, nil
}

func (s *memStore) DeleteFunction(_ context.Context, tenant, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := Definition{Tenant: tenant, Name: name}.key()
	if _, ok := s.m[k]; !ok {
		return ErrNotFound
	}
	delete(s.m, k)
	return nil
}

func newManager(t *testing.T) *Manager {
	t.Helper()
	m, err := New(Config{Store: &memStore{m: map[string]Definition{}}, Dir: t.TempDir(), Env: []string{"EXTRA=yes"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// testBootstrap is a code archive whose bootstrap runs this test binary.
func testBootstrap(t *testing.T) []byte {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\nexec %q -test.run='^$'\n", exe)
	if err := os.WriteFile(filepath.Join(dir, "bootstrap"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	code, err := ZipDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// create makes a provided function running testHandler(mode).
func create(t *testing.T, m *Manager, name, mode string, edit func(*Definition)) Definition {
	t.Helper()
	d := Definition{Name: name, Kind: KindProvided, Handler: "test:" + mode}
	if edit != nil {
		edit(&d)
	}
	if raceEnabled {
		d.MemoryMB = MaxMemoryMB
	}
	d, err := m.Create(context.Background(), d, testBootstrap(t))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func invoke(t *testing.T, m *Manager, name, payload string) (Result, map[string]any) {
	t.Helper()
	r, err := m.Invoke(context.Background(), name, []byte(payload))
	if err != nil {
		t.Fatalf("Invoke(%s): %v", name, err)
	}
	var out map[string]any
	if r.Error == nil {
		if err := json.Unmarshal(r.Payload, &out); err != nil {
			t.Fatalf("payload %q: %v", r.Payload, err)
		}
	}
	return r, out
}
