package customresource

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/value"
)

// tokenProps are properties with just a ServiceToken (and optional extras).
func tokenProps(token string, extra map[string]cty.Value) cty.Value {
	attrs := map[string]cty.Value{"ServiceToken": cty.StringVal(token)}
	for k, v := range extra {
		attrs[k] = v
	}
	return obj(attrs)
}

// summaries returns the summaries of diags, for comparison.
func summaries(ds diag.Diagnostics) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Summary)
	}
	return out
}

// TestDelivery covers how a request reaches its handler: the HTTP answer of an async token
// only acknowledges it, a sync token's answer is the response, failures fail fast, and
// retries follow the ROS rules.
func TestDelivery(t *testing.T) {
	okBody := func(ev map[string]any) string {
		b, _ := json.Marshal(succeed(map[string]any{"Out": "x"})(ev))
		return string(b)
	}
	type want struct {
		id         string
		summary    string // substring of the first diagnostic's summary+detail; "" = success
		requests   int    // POSTs the handler got
		notCreated bool   // a failed Create the handler never accepted: no rollback Delete
	}
	cases := map[string]struct {
		reason  string
		kind    string
		prefix  string // token prefix before the URL
		answers []func(ev map[string]any) (int, string)
		respond bool // PUT a SUCCESS response after accepting
		want    want
	}{
		"AsyncAccepted": {
			reason: "An async token's 2xx answer acknowledges; the PUT response completes the call.",
			kind:   reqCreate, answers: []func(map[string]any) (int, string){func(map[string]any) (int, string) { return 202, "" }},
			respond: true, want: want{id: "phys-Thing", requests: 1},
		},
		"Async500FailsFast": {
			reason: "A 500 from an async token fails the Create at once with the status and body, without retrying; a gateway may answer 500 after the handler acted, so the rollback still sends Delete.",
			kind:   reqCreate, answers: []func(map[string]any) (int, string){func(map[string]any) (int, string) { return 500, "handler exploded" }},
			want: want{summary: `answered 500 Internal Server Error to the Create request: RequestId tok; response body: "handler exploded"`, requests: 1},
		},
		"Async403IsARefusal": {
			reason: "A 4xx to a Create is a refusal: nothing was created, and the rollback sends no Delete.",
			kind:   reqCreate, answers: []func(map[string]any) (int, string){func(map[string]any) (int, string) { return 403, "forbidden" }},
			want: want{summary: `answered 403 Forbidden to the Create request: RequestId tok; response body: "forbidden"`, requests: 1,
				notCreated: true},
		},
		"Async404FailsFast": {
			reason: "A 4xx is never retried, not even for Delete.",
			kind:   reqDelete, answers: []func(map[string]any) (int, string){func(map[string]any) (int, string) { return 404, "no such route" }},
			want: want{summary: "answered 404 Not Found to the Delete request", requests: 1},
		},
		"UpdateRetried": {
			reason: "Update is retried on 5xx, up to 3 times.",
			kind:   reqUpdate, answers: []func(map[string]any) (int, string){
				func(map[string]any) (int, string) { return 503, "" },
				func(map[string]any) (int, string) { return 502, "" },
				func(map[string]any) (int, string) { return 200, "" },
			},
			respond: true, want: want{id: "phys-1", requests: 3},
		},
		"DeleteGivesUp": {
			reason: "Delete stops after 1 try and 3 retries.",
			kind:   reqDelete, answers: []func(map[string]any) (int, string){func(map[string]any) (int, string) { return 500, "" }},
			want: want{summary: "answered 500", requests: 4},
		},
		"IdempotentCreateRetried": {
			reason: "web[idempotent] lets Create be retried.",
			kind:   reqCreate, prefix: "web[idempotent]:", answers: []func(map[string]any) (int, string){
				func(map[string]any) (int, string) { return 500, "" },
				func(map[string]any) (int, string) { return 200, "" },
			},
			respond: true, want: want{id: "phys-Thing", requests: 2},
		},
		"Sync": {
			reason: "web[sync]: the POST's answer is the response object.",
			kind:   reqCreate, prefix: "web[sync]:", answers: []func(map[string]any) (int, string){
				func(ev map[string]any) (int, string) { return 200, okBody(ev) },
			},
			want: want{id: "phys-Thing", requests: 1},
		},
		"SyncIdempotentRetried": {
			reason: "web[idempotent,sync] (options in any order) retries a Create on 5xx.",
			kind:   reqCreate, prefix: "web[idempotent,sync]:", answers: []func(map[string]any) (int, string){
				func(map[string]any) (int, string) { return 500, "" },
				func(ev map[string]any) (int, string) { return 200, okBody(ev) },
			},
			want: want{id: "phys-Thing", requests: 2},
		},
		"SyncInvalidAnswer": {
			reason: "A sync answer is validated like a PUT.",
			kind:   reqCreate, prefix: "web[sync]:", answers: []func(map[string]any) (int, string){
				func(ev map[string]any) (int, string) { return 200, `{"Status":"SUCCESS"}` },
			},
			want: want{summary: "Response does not match its request", requests: 1},
		},
		"SyncFailed": {
			reason: "A sync FAILED answer fails the call with its Reason.",
			kind:   reqCreate, prefix: "web[sync]:", answers: []func(map[string]any) (int, string){
				func(ev map[string]any) (int, string) {
					m := answerTo(ev, "FAILED")
					m["Reason"], m["PhysicalResourceId"] = "quota exceeded", "half-made"
					b, _ := json.Marshal(m)
					return 200, string(b)
				},
			},
			want: want{id: "half-made", summary: "quota exceeded", requests: 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := newRig(t)
			h := &fakeHandler{t: t}
			h.answer = func(ev map[string]any) (int, string) {
				i := min(h.count(), len(tc.answers)) - 1
				return tc.answers[i](ev)
			}
			if tc.respond {
				h.respond = func(ev map[string]any) map[string]any {
					if i := min(h.count(), len(tc.answers)) - 1; i < len(tc.answers)-1 {
						return nil // only the last, accepted attempt answers
					}
					return succeed(map[string]any{"Out": "x"})(ev)
				}
			}
			token := tc.prefix + r.handle("/h", h)
			start := time.Now()
			o, err := r.p.run(context.Background(), call{kind: tc.kind, res: cfnResource, token: "tok", physical: "phys-1",
				props: tokenProps(token, nil), oldProps: tokenProps(token, nil)})
			if err != nil {
				t.Fatalf("%s\nrun: %v", tc.reason, err)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("%s\nthe call took %s; failures must be fast", tc.reason, el)
			}
			got := want{id: o.id, requests: h.count(), notCreated: o.notCreated != ""}
			if len(o.diags) > 0 {
				got.summary = o.diags[0].Error()
				if !strings.Contains(got.summary, tc.want.summary) || tc.want.summary == "" {
					t.Errorf("%s\ndiagnostic %q does not contain %q", tc.reason, got.summary, tc.want.summary)
				}
				got.summary = tc.want.summary
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\noutcome: -want +got:\n%s", tc.reason, diff)
			}
			if tc.want.summary == "" && r.store.response(t, "tok") == nil {
				t.Errorf("%s\nno response stored", tc.reason)
			}
		})
	}
}

// TestUnreachableHandlerFailsFast: a refused connection fails the call at once and names no
// URL (which may hold credentials).
func TestUnreachableHandlerFailsFast(t *testing.T) {
	r := newRig(t)
	o, err := r.p.run(context.Background(), call{kind: reqCreate, res: cfnResource, token: "tok",
		props: tokenProps("http://127.0.0.1:1/secret-path?key=hunter2", nil)})
	if err != nil {
		t.Fatal(err)
	}
	msg := o.diags.Error()
	if !strings.Contains(msg, "Cannot deliver the Create request") || strings.Contains(msg, "hunter2") {
		t.Errorf("diagnostic: got %q, want a delivery failure without the URL", msg)
	}
}

// TestResume: the engine calls again with the same Token after a restart.
func TestResume(t *testing.T) {
	t.Run("AnsweredWhileDown", func(t *testing.T) {
		// A response saved before Create is called again returns without a second request.
		r := newRig(t)
		h := &fakeHandler{t: t}
		token := r.handle("/h", h)
		url := storeRequest(t, r, cfnResource, "tok")
		status, _ := put(t, http.MethodPut, url, respBody(cfnResource, "tok", map[string]any{"PhysicalResourceId": "done"}))
		if status != 200 {
			t.Fatalf("PUT: %d", status)
		}
		resp, err := r.p.Create(context.Background(), provider.CreateRequest{Resource: cfnResource, Token: "tok", Props: tokenProps(token, nil)})
		if err != nil || resp.ID != "done" || resp.Diagnostics.HasErrors() {
			t.Fatalf("Create: %+v %v", resp, err)
		}
		if n := h.count(); n != 0 {
			t.Errorf("handler got %d requests, want 0", n)
		}
	})
	t.Run("SentNotAnswered", func(t *testing.T) {
		// A request sent before the restart is not sent again; the call waits for its answer.
		r := newRig(t)
		h := &fakeHandler{t: t}
		token := r.handle("/h", h)
		url := storeRequest(t, r, cfnResource, "tok")
		go func() {
			time.Sleep(50 * time.Millisecond)
			put(t, http.MethodPut, url, respBody(cfnResource, "tok", map[string]any{"PhysicalResourceId": "late"}))
		}()
		resp, err := r.p.Create(context.Background(), provider.CreateRequest{Resource: cfnResource, Token: "tok", Props: tokenProps(token, nil)})
		if err != nil || resp.ID != "late" {
			t.Fatalf("Create: %+v %v", resp, err)
		}
		if n := h.count(); n != 0 {
			t.Errorf("handler got %d requests, want 0", n)
		}
	})
	t.Run("SavedByAnotherProcess", func(t *testing.T) {
		// A response stored without this process's handler (another server on the same
		// store) is found by re-reading the store.
		r := newRig(t)
		h := &fakeHandler{t: t}
		token := r.handle("/h", h)
		storeRequest(t, r, cfnResource, "tok")
		go func() {
			time.Sleep(50 * time.Millisecond)
			r.store.SaveResponse(context.Background(), "tok", []byte(respBody(cfnResource, "tok", map[string]any{"PhysicalResourceId": "elsewhere"})), testNow)
		}()
		resp, err := r.p.Create(context.Background(), provider.CreateRequest{Resource: cfnResource, Token: "tok", Props: tokenProps(token, nil)})
		if err != nil || resp.ID != "elsewhere" {
			t.Fatalf("Create: %+v %v", resp, err)
		}
	})
	t.Run("SameTokenTwice", func(t *testing.T) {
		// Two calls with one token send one request and get one outcome.
		r := newRig(t)
		h := &fakeHandler{t: t, respond: succeed(nil)}
		token := r.handle("/h", h)
		req := provider.CreateRequest{Resource: cfnResource, Token: "tok", Props: tokenProps(token, nil)}
		first, err1 := r.p.Create(context.Background(), req)
		second, err2 := r.p.Create(context.Background(), req)
		if err1 != nil || err2 != nil || first.ID != "phys-Thing" || second.ID != first.ID {
			t.Fatalf("Create twice: %+v %v / %+v %v", first, err1, second, err2)
		}
		if n := h.count(); n != 1 {
			t.Errorf("handler got %d requests, want 1", n)
		}
	})
}

// TestWaitingCall covers how a waiting call ends besides a valid response.
func TestWaitingCall(t *testing.T) {
	t.Run("Timeout", func(t *testing.T) {
		r := newRig(t)
		token := r.handle("/h", &fakeHandler{t: t})
		o, err := r.p.run(context.Background(), call{kind: reqCreate, res: cfnResource, token: "tok",
			props: tokenProps(token, map[string]cty.Value{"ServiceTimeout": cty.StringVal("1")})})
		if err != nil {
			t.Fatal(err)
		}
		want := "cairn did not receive a response from your Custom Resource within 1s. Please check your logs for requestId [tok]"
		if got := summaries(o.diags); !cmp.Equal(got, []string{want}) {
			t.Errorf("diagnostics: got %q, want %q", got, want)
		}
	})
	t.Run("OversizeResponseFailsTheCall", func(t *testing.T) {
		r := newRig(t)
		h := &fakeHandler{t: t, respond: func(ev map[string]any) map[string]any {
			m := succeed(nil)(ev)
			m["Reason"] = strings.Repeat("r", 5000)
			return m
		}}
		token := r.handle("/h", h)
		o, err := r.p.run(context.Background(), call{kind: reqCreate, res: cfnResource, token: "tok", props: tokenProps(token, nil)})
		if err != nil {
			t.Fatal(err)
		}
		if msg := o.diags.Error(); !strings.Contains(msg, "Response object is too long") || !strings.Contains(msg, "the limit is 4096 bytes") {
			t.Errorf("diagnostics: got %q, want the size named", msg)
		}
		h.putsDone.Wait()
		if diff := cmp.Diff([]int{413}, h.puts); diff != "" {
			t.Errorf("PUT statuses: -want +got:\n%s", diff)
		}
		if got := r.store.response(t, "tok"); got != nil {
			if _, ended := endedReason(got); !ended {
				t.Errorf("stored response: got %s, want none but the ended mark", got)
			}
		}
	})
	t.Run("MismatchKeepsWaiting", func(t *testing.T) {
		// A response for another resource is refused and the call waits for the right one.
		r := newRig(t)
		h := &fakeHandler{t: t}
		h.respond = func(ev map[string]any) map[string]any {
			wrong := succeed(nil)(ev)
			wrong["LogicalResourceId"] = "Other"
			h.putsDone.Add(1)
			h.put(ev["ResponseURL"].(string), wrong) // before the POST is answered
			return succeed(nil)(ev)
		}
		token := r.handle("/h", h)
		o, err := r.p.run(context.Background(), call{kind: reqCreate, res: cfnResource, token: "tok", props: tokenProps(token, nil)})
		if err != nil || o.diags.HasErrors() || o.id != "phys-Thing" {
			t.Fatalf("run: %+v %v", o, err)
		}
		h.putsDone.Wait()
		if diff := cmp.Diff([]int{400, 200}, h.puts); diff != "" {
			t.Errorf("PUT statuses: -want +got:\n%s", diff)
		}
	})
	t.Run("RecheckReadsAResponseSavedElsewhere", func(t *testing.T) {
		// Another replica's response handler saved the answer; Recheck makes the wait read
		// it at once, though the next poll is an hour away.
		r := newRig(t)
		r.p.poll, r.p.maxPoll = time.Hour, time.Hour
		h := &fakeHandler{t: t, respond: func(ev map[string]any) map[string]any {
			go func() {
				time.Sleep(100 * time.Millisecond) // the wait is parked on its hour-long poll by now
				body, _ := json.Marshal(succeed(nil)(ev))
				if _, err := r.store.SaveResponse(context.Background(), ev["RequestId"].(string), body, testNow); err != nil {
					t.Error(err)
				}
				r.p.Recheck(ev["RequestId"].(string))
			}()
			return nil
		}}
		token := r.handle("/h", h)
		// Without the recheck the run would wait the hour (the test's timeout fails it).
		o, err := r.p.run(context.Background(), call{kind: reqCreate, res: cfnResource, token: "tok", props: tokenProps(token, nil)})
		if err != nil || o.diags.HasErrors() || o.id != "phys-Thing" {
			t.Fatalf("run: %+v %v", o, err)
		}
	})
	t.Run("ContextCancelled", func(t *testing.T) {
		r := newRig(t)
		token := r.handle("/h", &fakeHandler{t: t})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := r.p.run(ctx, call{kind: reqCreate, res: cfnResource, token: "tok", props: tokenProps(token, nil)})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("run: got %v, want context.DeadlineExceeded", err)
		}
	})
	t.Run("Closed", func(t *testing.T) {
		r := newRig(t)
		token := r.handle("/h", &fakeHandler{t: t})
		go func() { time.Sleep(50 * time.Millisecond); r.p.Close() }()
		_, err := r.p.run(context.Background(), call{kind: reqCreate, res: cfnResource, token: "tok", props: tokenProps(token, nil)})
		if !errors.Is(err, errClosed) {
			t.Errorf("run: got %v, want errClosed", err)
		}
	})
}

// TestSlowHandlers: an async endpoint must acknowledge promptly; a sync one must answer
// within the timeout.
func TestSlowHandlers(t *testing.T) {
	slow := func(release <-chan struct{}) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		})
	}
	t.Run("AsyncAcknowledgement", func(t *testing.T) {
		r := newRig(t)
		r.p.sendWithin = 100 * time.Millisecond
		release := make(chan struct{})
		defer close(release)
		token := r.handle("/h", slow(release))
		o, err := r.p.run(context.Background(), call{kind: reqCreate, res: cfnResource, token: "tok", props: tokenProps(token, nil)})
		if err != nil {
			t.Fatal(err)
		}
		if msg := o.diags.Error(); !strings.Contains(msg, "did not answer the POST within 100ms") {
			t.Errorf("diagnostics: got %q", msg)
		}
	})
	t.Run("SyncTimeout", func(t *testing.T) {
		r := newRig(t)
		release := make(chan struct{})
		defer close(release)
		token := r.handle("/h", slow(release))
		o, err := r.p.run(context.Background(), call{kind: reqCreate, res: rosResource, token: "tok",
			props: tokenProps("web[sync]:"+token, map[string]cty.Value{"Timeout": cty.NumberIntVal(1)})})
		if err != nil {
			t.Fatal(err)
		}
		want := "cairn did not receive a response from your Custom Resource within 1s. Please check your logs for requestId [tok]"
		if got := summaries(o.diags); !cmp.Equal(got, []string{want}) {
			t.Errorf("diagnostics: got %q, want %q", got, want)
		}
	})
}

// TestLogsHoldNoSecrets: a run with a secret property, a forged PUT, a mismatched PUT and a
// valid one logs neither the signature, the URL's query nor any property value.
func TestLogsHoldNoSecrets(t *testing.T) {
	r := newRig(t)
	var buf safeBuffer
	r.p.log = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := &fakeHandler{t: t}
	h.respond = func(ev map[string]any) map[string]any {
		url := ev["ResponseURL"].(string)
		put(t, http.MethodPut, url[:strings.Index(url, "&signature=")]+"&signature=00", "{}")
		wrong := succeed(nil)(ev)
		wrong["StackId"] = "other"
		h.putsDone.Add(1)
		h.put(url, wrong)
		return succeed(map[string]any{"Token": "data-secret"})(ev)
	}
	token := r.handle("/h", h)
	_, err := r.p.Create(context.Background(), provider.CreateRequest{Resource: cfnResource, Token: "tok",
		Props: tokenProps(token, map[string]cty.Value{"Password": value.Secret(cty.StringVal("s3cr3t"))})})
	if err != nil {
		t.Fatal(err)
	}
	h.putsDone.Wait()
	logs := buf.String()
	for _, leak := range []string{"signature=", "expires=", r.p.sign("tok", ""), "s3cr3t", "data-secret", "ResourceProperties"} {
		if strings.Contains(logs, leak) {
			t.Errorf("logs contain %q:\n%s", leak, logs)
		}
	}
	for _, want := range []string{"request sent", "response rejected", "status=403", "status=400", "response accepted"} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
}

// safeBuffer is a bytes.Buffer safe for concurrent writers.
type safeBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *safeBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *safeBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestAnsweredThen502: a handler that PUT its SUCCESS before its gateway answered the POST
// with 502 created something: the stored answer is the outcome, not a delivery failure (which
// would skip the rollback's Delete and orphan it).
func TestAnsweredThen502(t *testing.T) {
	r := newRig(t)
	h := &fakeHandler{t: t}
	h.answer = func(ev map[string]any) (int, string) {
		m := answerTo(ev, "SUCCESS")
		m["PhysicalResourceId"] = "real-thing"
		b, _ := json.Marshal(m)
		req, _ := http.NewRequest(http.MethodPut, ev["ResponseURL"].(string), bytes.NewReader(b))
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
		return http.StatusBadGateway, "upstream timed out"
	}
	token := r.handle("/h", h)
	o, err := r.p.run(context.Background(), call{kind: reqCreate, res: cfnResource, token: "tok",
		props: tokenProps(token, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if o.id != "real-thing" || len(o.diags) > 0 || o.notCreated != "" {
		t.Errorf("outcome id %q, diags %v, notCreated %q; want the stored SUCCESS of real-thing", o.id, o.diags, o.notCreated)
	}
}
