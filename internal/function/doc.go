// Package function runs cairn's functions: named, invocable units that custom-resource
// ServiceTokens (Lambda ARNs, Function Compute tokens, FunctionGraph URNs) point at.
//
// A function is one of three kinds:
//
//   - url: an HTTP endpoint; an invocation POSTs the event to it.
//   - provided: a code directory with an executable `bootstrap` that cairn runs and talks to
//     over the AWS Lambda Runtime API (2018-06-01), so unmodified aws-lambda-go binaries work.
//   - nodejs: a code directory and a handler such as index.handler; cairn runs its own Node
//     bootstrap (bootstrap.js, embedded) over the same Runtime API.
//
// Files by job: function.go (definitions, limits), names.go (token forms), manager.go (CRUD,
// resolution, invocation), pool.go (warm processes, concurrency), worker.go (one process),
// runtimeapi.go (the Runtime API a process talks to), urlfunc.go (url kind), logs.go
// (captured output), code.go (code directories), api.go (the HTTP API's types).
//
// The package imports api and the standard library only; state and customresource reach it
// through adapters in internal/app. docs/functions.md is the user's guide.
package function
