package customresource

import (
	"context"
	"fmt"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/value"
)

// Invoker resolves function tokens (a Lambda ARN, a Function Compute token, a FunctionGraph
// URN) to the functions cairn runs. Resolve's error is a user-facing reason: a malformed token,
// or an unknown function with the registered ones listed.
type Invoker interface {
	Resolve(ctx context.Context, token string) (Func, error)
}

// InvokerFunc adapts a function to Invoker.
type InvokerFunc func(ctx context.Context, token string) (Func, error)

// Resolve calls f.
func (f InvokerFunc) Resolve(ctx context.Context, token string) (Func, error) { return f(ctx, token) }

// Func is one resolved function.
type Func interface {
	// InvokeAsync hands payload to the function the way Lambda's Event invocation does and
	// returns once it is accepted. ended, when not nil, is called once the invocation is over:
	// with nil when the handler returned, with the reason when it failed, crashed or timed out.
	InvokeAsync(ctx context.Context, payload []byte, ended func(error)) error
}

// noteReturned is the progress reported when a function returned without answering.
const noteReturned = "the function returned without answering; waiting for the answer at the ResponseURL (up to ServiceTimeout)"

// resolve returns the function a function token names; the error is a user-facing reason.
func (p *Provider) resolve(ctx context.Context, tok serviceToken) (Func, error) {
	if p.functions == nil {
		return nil, fmt.Errorf("ServiceToken is %s, but this cairn serves no functions; %s", functionOrTopic(tok.function), supportedForms)
	}
	fn, err := p.functions.Resolve(ctx, tok.function)
	if err != nil {
		return nil, fmt.Errorf("ServiceToken is %s that cairn cannot use: %w", functionOrTopic(tok.function), err)
	}
	return fn, nil
}

// checkFunctionToken is Check's reason for a function token that resolves to nothing, "" when
// it resolves or is not a function token.
func (p *Provider) checkFunctionToken(ctx context.Context, props cty.Value) string {
	v, ok := value.Get(props, propToken)
	if !ok || v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
		return ""
	}
	tok, err := parseToken(v.AsString())
	if err != nil || tok.function == "" {
		return ""
	}
	if _, err := p.resolve(ctx, tok); err != nil {
		return err.Error()
	}
	return ""
}

// invoke delivers the request by invoking the function asynchronously. It returns done=true
// with the failure when the function did not accept it. When the invocation ends, a call still
// waiting for the response learns at once that the handler failed (with its reason); when the
// handler returned cleanly without answering, the call keeps waiting for the answer at the
// ResponseURL until its deadline (ServiceTimeout) and reports that it does (noteReturned).
func (p *Provider) invoke(ctx context.Context, c call, fn Func, tok serviceToken, r Request) (outcome, bool, error) {
	ended := func(err error) {
		if err != nil {
			p.log.Info("custom resources: function invocation failed", "request_id", r.ID, "token", tok.kind(), "err", err)
			p.notify(r.ID, notice{reject: &rejection{fatal: true,
				summary: fmt.Sprintf("The function failed before responding to the %s request", c.kind),
				detail: fmt.Sprintf("RequestId %s: %v; `cairn function logs FUNCTION --request-id %s` shows the function's output",
					r.ID, err, r.ID)}})
			return
		}
		// An asynchronous handler hands the ResponseURL to work it left running and returns:
		// the answer may still come, so the call keeps waiting until its deadline.
		p.log.Info("custom resources: function returned without answering; waiting for the response", "request_id", r.ID)
		p.notify(r.ID, notice{note: noteReturned})
	}
	if err := fn.InvokeAsync(ctx, r.Body, ended); err != nil {
		o := failed(fmt.Sprintf("Cannot invoke the ServiceToken function for the %s request", c.kind),
			fmt.Sprintf("RequestId %s: %v", r.ID, err))
		return notCreated(o, c, "the ServiceToken function never accepted the Create request, so nothing was created"), true, nil
	}
	p.log.Info("custom resources: request sent", "request_id", r.ID, "stack", r.Stack, "logical_id", r.LogicalID,
		"request_type", c.kind, "token", tok.kind())
	if err := p.store.MarkSent(ctx, r.ID); err != nil {
		return outcome{}, false, fmt.Errorf("cannot mark custom resource request %s sent: %w", r.ID, err)
	}
	return outcome{}, false, nil
}
