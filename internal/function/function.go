package function

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/tenant"
)

// Kind is how a function runs.
type Kind string

// Kinds.
const (
	KindURL      Kind = "url"      // an HTTP endpoint POSTed the event
	KindProvided Kind = "provided" // an executable bootstrap speaking the Lambda Runtime API
	KindNodejs   Kind = "nodejs"   // a Node module run by cairn's bootstrap
	KindPython   Kind = "python"   // a Python module run by cairn's bootstrap
	// KindTerraformProvider is a Terraform provider binary that cairn serves itself as an RFS
	// HTTP function (as `cairn provider serve` does), for private provider versions. It is
	// called through the private-provider envelope, never invoked with an event.
	KindTerraformProvider Kind = "terraform-provider"
)

// Limits and defaults.
const (
	DefaultTimeout     = 30 * time.Second
	MaxTimeout         = 15 * time.Minute
	DefaultMemoryMB    = 128
	MinMemoryMB        = 64
	MaxMemoryMB        = 10240
	DefaultConcurrency = 4
	MaxConcurrency     = 64
	// MaxPayloadBytes bounds an event and a result, as Lambda's synchronous invocations.
	MaxPayloadBytes = 6 << 20
)

// Definition is a function as stored.
type Definition struct {
	Tenant      string // set by Manager.Create from the caller's context
	Name        string
	Kind        Kind
	URL         string        // KindURL
	Handler     string        // nodejs, python: module.function; provided: passed as _HANDLER
	CodeDir     string        // provided and nodejs: the copy in cairn's data directory
	Timeout     time.Duration // per invocation
	MemoryMB    int           // see docs/functions.md for what is enforced
	Concurrency int           // warm processes at most (url: requests in flight at most)
	// Env is the function's own environment variables (Lambda's Environment.Variables). Their
	// values may be secrets: the store keeps them sealed, and nothing shows them but the
	// function's processes.
	Env       map[string]string
	CreatedAt time.Time
	// Code is the zip Create or Update took, for the Store to keep: a replica that lacks
	// CodeDir unpacks it (Manager.localCode). Definitions read from the Store leave it nil.
	Code []byte
}

// Errors.
var (
	ErrNotFound = errors.New("no such function")
	ErrExists   = errors.New("function exists")
	ErrClosed   = errors.New("function manager is closed")
)

// InvalidError is a definition or request a user must fix.
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

func invalidf(format string, args ...any) error {
	return &InvalidError{Msg: fmt.Sprintf(format, args...)}
}

// key names the function among every tenant's, for its code directory, logs and processes:
// the name itself in the default tenant (as before tenants), TENANT~NAME in another ('~' is in
// neither a tenant's nor a function's name).
func (d Definition) key() string {
	if d.Tenant == "" || d.Tenant == tenant.Default {
		return d.Name
	}
	return d.Tenant + "~" + d.Name
}

// same reports whether d and o are the same definition: a pool made for one serves the other.
func (d Definition) same(o Definition) bool {
	return d.Tenant == o.Tenant && d.Name == o.Name && d.Kind == o.Kind && d.URL == o.URL && d.Handler == o.Handler &&
		d.CodeDir == o.CodeDir && d.Timeout == o.Timeout && d.MemoryMB == o.MemoryMB && d.Concurrency == o.Concurrency &&
		d.CreatedAt.Equal(o.CreatedAt) && maps.Equal(d.Env, o.Env)
}

// validName is Lambda's function-name rule: letters, digits, hyphens and underscores.
var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// withDefaults fills zero limits and checks d; CodeDir is not checked (the manager sets it).
func (d Definition) withDefaults() (Definition, error) {
	if !validName.MatchString(d.Name) {
		return d, invalidf("function name %q is invalid: use 1 to 64 letters, digits, '-' or '_'", d.Name)
	}
	if d.Timeout == 0 {
		d.Timeout = DefaultTimeout
	}
	if d.MemoryMB == 0 {
		d.MemoryMB = DefaultMemoryMB
	}
	if d.Concurrency == 0 {
		d.Concurrency = DefaultConcurrency
	}
	switch {
	case d.Timeout < time.Second || d.Timeout > MaxTimeout:
		return d, invalidf("timeout %s is out of range: 1s to %s", d.Timeout, MaxTimeout)
	case d.MemoryMB < MinMemoryMB || d.MemoryMB > MaxMemoryMB:
		return d, invalidf("memory %d MB is out of range: %d to %d", d.MemoryMB, MinMemoryMB, MaxMemoryMB)
	case d.Concurrency < 1 || d.Concurrency > MaxConcurrency:
		return d, invalidf("concurrency %d is out of range: 1 to %d", d.Concurrency, MaxConcurrency)
	}
	switch d.Kind {
	case KindURL:
		u, err := url.Parse(d.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return d, invalidf("a url function needs an absolute http:// or https:// URL")
		}
		if d.Handler != "" {
			return d, invalidf("a url function takes no handler")
		}
	case KindProvided, KindTerraformProvider:
	case KindNodejs, KindPython:
		if i := strings.LastIndex(d.Handler, "/"); !strings.Contains(d.Handler[i+1:], ".") ||
			strings.HasPrefix(d.Handler[i+1:], ".") || strings.HasSuffix(d.Handler, ".") {
			return d, invalidf("handler %q is invalid: a %s function needs MODULE.FUNCTION, such as index.handler", d.Handler, d.Kind)
		}
	case "":
		return d, invalidf("a function needs a URL (kind url) or code with a runtime (provided, nodejs or python)")
	default:
		return d, invalidf("runtime %q is not supported: use provided, nodejs, python or terraform-provider", d.Kind)
	}
	if err := checkEnv(d.Env); err != nil {
		return d, err
	}
	if d.Kind == KindURL && len(d.Env) > 0 {
		return d, invalidf("a url function runs no process: it takes no environment variables")
	}
	if d.Kind != KindURL && d.URL != "" {
		return d, invalidf("a %s function takes code, not a URL", d.Kind)
	}
	return d, nil
}

// ARN is the Lambda ARN the function answers to in region and account.
func (d Definition) ARN(region, account string) string {
	return "arn:aws:lambda:" + region + ":" + account + ":function:" + d.Name
}

// Result is the outcome of one invocation.
type Result struct {
	RequestID string
	// Payload is the handler's result (JSON as the handler sent it), or, when Error is set,
	// the error object {"errorMessage","errorType",...}.
	Payload  []byte
	Error    *FuncError // nil when the handler succeeded
	Duration time.Duration
}

// Err is Error as an error, nil when the invocation succeeded.
func (r Result) Err() error {
	if r.Error == nil {
		return nil
	}
	return r.Error
}

// FuncError is a failed invocation: the handler's error, or cairn's reason (a crash, a
// timeout, an endpoint's refusal). Types follow Lambda's: Runtime.ExitError,
// Sandbox.Timedout, Runtime.InvalidEntrypoint, Function.ResponseSizeTooLarge, or the
// handler's own.
type FuncError struct {
	Type    string `json:"errorType"`
	Message string `json:"errorMessage"`
	// StackTrace is the runtime's, as it sent it: strings from Node, frames from Go.
	StackTrace json.RawMessage `json:"stackTrace,omitempty"`
}

func (e *FuncError) Error() string {
	if e.Type == "" {
		return e.Message
	}
	return e.Type + ": " + e.Message
}

func jsonValid(b []byte) bool { return json.Valid(b) }

func marshalString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}
