package customresource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/function"
	"github.com/cairn-dev/cairn/internal/provider"
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
// (crash, timeout, error) fails the call at once; a clean return without a response keeps the
// call waiting for the answer at the ResponseURL until the deadline, and says so once.
func TestFunctionTokens(t *testing.T) {
	const arn = "arn:aws:lambda:us-east-1:123456789012:function:greeter"
	var asyncPuts sync.WaitGroup
	defer asyncPuts.Wait()
	asyncPut := func(url string, resp map[string]any) {
		defer asyncPuts.Done()
		(&fakeHandler{t: t}).putNoWait(url, resp)
	}
	cases := map[string]struct {
		reason string
		token  string
		fn     *fakeFunc
		wantID string
		want   string   // substring of the diagnostics; "" = success
		notes  []string // progress reported
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
			reason: "A handler that returns without a PUT, and leaves nothing that answers, fails at the deadline (ServiceTimeout).",
			token:  arn,
			fn:     &fakeFunc{invoke: func(_ map[string]any, ended func(error)) { ended(nil) }},
			want:   "cairn did not receive a response from your Custom Resource within 1s",
			notes:  []string{noteReturned},
		},
		"AsyncHandler": {
			reason: "A handler that hands the ResponseURL to a worker and returns succeeds when the worker answers " +
				"before the deadline, long after the function returned; the wait is reported once.",
			token: arn,
			fn: &fakeFunc{invoke: func(ev map[string]any, ended func(error)) {
				ended(nil)
				time.Sleep(300 * time.Millisecond)
				asyncPuts.Add(1)
				asyncPut(ev["ResponseURL"].(string), succeed(nil)(ev))
			}},
			wantID: "phys-Thing",
			notes:  []string{noteReturned},
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
			var notes []string
			ctx := provider.WithProgress(context.Background(), func(reason string) { notes = append(notes, reason) })
			o, err := r.p.run(ctx, call{kind: reqCreate, res: cfnResource, token: "tok", props: tokenProps(tc.token, nil),
				timeout: time.Second})
			if err != nil {
				t.Fatalf("%s\nrun: %v", tc.reason, err)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("%s\nthe call took %s", tc.reason, el)
			}
			if !slices.Equal(notes, tc.notes) {
				t.Errorf("%s\nprogress reported: %q, want %q", tc.reason, notes, tc.notes)
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

// TestLateAnswerRefused: an answer that arrives after its step ended without one (deadline
// passed, function failed) is refused with 409 naming the request and why, never accepted and
// dropped; a resumed call for that request fails with the same reason.
func TestLateAnswerRefused(t *testing.T) {
	const arn = "arn:aws:lambda:us-east-1:123456789012:function:greeter"
	cases := map[string]struct {
		fail func(ended func(error))
		want string // in the 409's message
	}{
		"Deadline": {fail: func(ended func(error)) { ended(nil) }, want: "no response arrived within 1s, its deadline"},
		"Crash":    {fail: func(ended func(error)) { ended(errors.New("Runtime.ExitError: exit status 2")) }, want: "Runtime.ExitError"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := newRig(t)
			var ev map[string]any
			got := make(chan struct{})
			r.p.functions = fakeInvoker{"greeter": &fakeFunc{invoke: func(e map[string]any, ended func(error)) {
				ev = e
				close(got)
				tc.fail(ended)
			}}}
			c := call{kind: reqCreate, res: cfnResource, token: "tok", props: tokenProps(arn, nil), timeout: time.Second}
			o, err := r.p.run(context.Background(), c)
			if err != nil || !o.diags.HasErrors() {
				t.Fatalf("run: %v, %q; want a failure", err, o.diags.Error())
			}
			<-got
			b, _ := json.Marshal(succeed(nil)(ev))
			status, answer := put(t, http.MethodPut, ev["ResponseURL"].(string), string(b))
			if status != http.StatusConflict || !strings.Contains(answer["message"], "request tok already ended without a response") ||
				!strings.Contains(answer["message"], tc.want) {
				t.Errorf("late answer: %d %q; want 409 naming the request and %q", status, answer["message"], tc.want)
			}
			o, err = r.p.run(context.Background(), c) // resumed: the request is closed
			if err != nil || !strings.Contains(o.diags.Error(), "The Create request tok ended without a response") {
				t.Errorf("resumed run: %v, %q", err, o.diags.Error())
			}
		})
	}
}
