package api

import (
	"encoding/json"
	"time"
)

// CodeFunctionExists: 409, a function of that name exists (delete it first).
const CodeFunctionExists = "function_exists"

// Function is a function as the API shows it (GET /v1/functions/{name}). Where the server
// keeps its copy of the code is not shown: that is the server's business.
type Function struct {
	Name           string `json:"name"`
	Kind           string `json:"kind"` // url, provided, nodejs or python
	URL            string `json:"url,omitempty"`
	Handler        string `json:"handler,omitempty"`
	TimeoutSeconds int    `json:"timeoutSeconds"`
	MemoryMB       int    `json:"memoryMB"`
	Concurrency    int    `json:"concurrency"`
	ARN            string `json:"arn"` // the Lambda ARN it answers to (any region, account and qualifier work)
	// EnvironmentKeys names the function's environment variables; their values are never shown.
	EnvironmentKeys []string  `json:"environmentKeys,omitempty"`
	CreatedAt       time.Time `json:"createdAt"`
}

// CreateFunctionRequest is the body of POST /v1/functions. Either URL, or Code with Runtime
// (provided, or nodejs or python with Handler; nodejs20.x and python3.12 name those too). Zero
// limits take the defaults. Environment's values are stored encrypted and never shown again.
type CreateFunctionRequest struct {
	Name           string            `json:"name"`
	URL            string            `json:"url,omitempty"`
	Runtime        string            `json:"runtime,omitempty"`
	Handler        string            `json:"handler,omitempty"`
	Code           []byte            `json:"code,omitempty"` // a zip archive of the code directory (base64 in JSON)
	TimeoutSeconds int               `json:"timeoutSeconds,omitempty"`
	MemoryMB       int               `json:"memoryMB,omitempty"`
	Concurrency    int               `json:"concurrency,omitempty"`
	Environment    map[string]string `json:"environment,omitempty"`
}

// InvokeRequest is the body of POST /v1/functions/{name}/invoke. Async queues the invocation
// (Lambda's Event type) and answers 202 with its request id only.
type InvokeRequest struct {
	Payload json.RawMessage `json:"payload,omitempty"`
	Async   bool            `json:"async,omitempty"`
}

// InvokeResponse is the outcome of an invocation; Error is set when it failed, and Payload is
// then the error object.
type InvokeResponse struct {
	RequestID  string          `json:"requestId"`
	Payload    json.RawMessage `json:"payload,omitempty"`
	Error      *FunctionError  `json:"error,omitempty"`
	DurationMs float64         `json:"durationMs,omitempty"`
}

// FunctionError is why an invocation failed: the handler's error, or cairn's reason
// (Runtime.ExitError, Sandbox.Timedout, ...).
type FunctionError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// LogEntry is one captured line of a function (GET /v1/functions/{name}/logs).
type LogEntry struct {
	Time      time.Time `json:"time"`
	RequestID string    `json:"requestId,omitempty"`
	// EventRequestID is the RequestId of the custom-resource event the invocation handled.
	EventRequestID string `json:"eventRequestId,omitempty"`
	Stream         string `json:"stream"`
	Message        string `json:"message"`
}
