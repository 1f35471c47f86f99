package customresource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/function"
)

// fakeInvoker resolves function tokens by name to the functions it holds.
type fakeInvoker map[string]*fakeFunc

func (f fakeInvoker) Resolve(_ context.Context, token string) (Func, error) {
	name, err := function.ParseName(token)
	if err != nil {
		return nil, errors.New("malformed")
	}
	fn, ok := f[name]
	if !ok {
		var names []string
		for n := range f {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("function %q is not registered; registered functions: %s", name, strings.Join(names, ", "))
	}
	return fn, nil
}

// fakeFunc runs invoke in the background for each event; refuse fails InvokeAsync.
type fakeFunc struct {
	refuse error
	invoke func(ev map[string]any, ended func(error))
}

func (f *fakeFunc) InvokeAsync(_ context.Context, payload []byte, ended func(error)) error {
	if f.refuse != nil {
		return f.refuse
	}
	var ev map[string]any
	if err := json.Unmarshal(payload, &ev); err != nil {
		return err
	}
	go f.invoke(ev, ended)
	return nil
}

// TestFunctionTokens: a function token is delivered by invoking the function; its failure
// (crash, timeout, error) or a return without a response fails the call at once.
func TestFunctionTokens(t *testing.T) {
	const arn = "arn:aws:lambda:us-east-1:123456789012:function:greeter"
	cases := map[string]struct {
		reason string
		token  string
		fn     *fakeFunc
		wantID string
		want   string // substring of the diagnostics; "" = success
	}{
		"Responds": {
			reason: "The handler PUTs SUCCESS to the ResponseURL, as a Lambda does.",
			token:  arn,
			wantID: "phys-Thing",
		},
		"FunctionGraphURN": {
			reason: "A FunctionGraph URN reaches the same function.",
			token:  "urn:fss:cn-north-4:p:function:default:greeter:latest",
			wantID: "phys-Thing",
		},
		"Crashed": {
			reason: "A crash without a response fails the call at once with the reason.",
			token:  arn,
			fn: &fakeFunc{invoke: func(_ map[string]any, ended func(error)) {
				ended(errors.New("Runtime.ExitError: exit status 2"))
			}},
			want: "The function failed before responding to the Create request: RequestId tok: Runtime.ExitError: exit status 2",
		},
		"ReturnedWithoutResponse": {
			reason: "A handler that returns without a PUT fails after the grace period, not the hour-long timeout.",
			token:  arn,
			fn:     &fakeFunc{invoke: func(_ map[string]any, ended func(error)) { ended(nil) }},
			want:   "The function returned without responding to the Create request",
		},
		"Refused": {
			reason: "A function that does not accept the invocation fails the call.",
			token:  arn,
			fn:     &fakeFunc{refuse: errors.New("1000 invocations are queued already")},
			want:   "Cannot invoke the ServiceToken function for the Create request: RequestId tok: 1000 invocations are queued already",
		},
		"Unknown": {
			reason: "An unknown function lists the registered ones.",
			token:  "arn:aws:lambda:us-east-1:123456789012:function:nope",
			want:   `Invalid ServiceToken: ServiceToken is a Lambda function ARN that cairn cannot use: function "nope" is not registered; registered functions: greeter`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := newRig(t)
			r.p.endedGrace = 100 * time.Millisecond
			h := &fakeHandler{t: t}
			fn := tc.fn
			if fn == nil {
				fn = &fakeFunc{invoke: func(ev map[string]any, ended func(error)) {
					h.putsDone.Add(1)
					h.put(ev["ResponseURL"].(string), succeed(nil)(ev))
					ended(nil)
				}}
			}
			r.p.functions = fakeInvoker{"greeter": fn}
			start := time.Now()
			o, err := r.p.run(context.Background(), call{kind: reqCreate, res: cfnResource, token: "tok", props: tokenProps(tc.token, nil)})
			if err != nil {
				t.Fatalf("%s\nrun: %v", tc.reason, err)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("%s\nthe call took %s", tc.reason, el)
			}
			got := o.diags.Error()
			switch {
			case tc.want == "" && (len(o.diags) > 0 || o.id != tc.wantID):
				t.Errorf("%s\noutcome: id %q, diagnostics %q; want id %q", tc.reason, o.id, got, tc.wantID)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("%s\ndiagnostics %q do not contain %q", tc.reason, got, tc.want)
			}
		})
	}
}
