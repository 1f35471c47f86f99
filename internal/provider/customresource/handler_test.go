package customresource

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
)

// storeRequest stores a sent request for res with id, expiring an hour after testNow, and
// returns its ResponseURL.
func storeRequest(t *testing.T, r *rig, res provider.Resource, id string) string {
	t.Helper()
	exp := testNow.Add(time.Hour)
	url := r.p.responseURL(id, exp)
	c := call{kind: reqCreate, res: res, token: id, props: obj(map[string]cty.Value{"ServiceToken": cty.StringVal("https://h")})}
	body, err := requestObject(c, "https://h", url)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.store.PutRequest(context.Background(), Request{ID: id, Stack: res.StackName, LogicalID: res.Name,
		Body: body, Expires: exp, Sent: true}); err != nil {
		t.Fatal(err)
	}
	return url
}

// respBody is a response to request id of cfnResource with fields overridden by set (a nil
// value deletes the field).
func respBody(res provider.Resource, id string, set map[string]any) string {
	m := map[string]any{"Status": "SUCCESS", "PhysicalResourceId": "phys-1", "StackId": res.StackID,
		"RequestId": id, "LogicalResourceId": res.Name, "Data": map[string]any{"Value": "v"}}
	for k, v := range set {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// padTo returns a valid response of exactly n bytes (padding Reason).
func padTo(n int) string {
	base := respBody(cfnResource, "req-1", map[string]any{"Reason": ""})
	return respBody(cfnResource, "req-1", map[string]any{"Reason": strings.Repeat("x", n-len(base))})
}

// TestResponseHandler checks every response rule: the HTTP status the sender gets, and that
// nothing but the first valid response is ever stored.
func TestResponseHandler(t *testing.T) {
	const id = "req-1"
	valid := respBody(cfnResource, id, nil)
	earlier := respBody(cfnResource, id, map[string]any{"PhysicalResourceId": "first"})
	type want struct {
		status  int
		message string // substring of the answer's message
		stored  string // the stored response afterwards ("" = none)
	}
	cases := map[string]struct {
		reason   string
		res      provider.Resource
		answered string // a response stored before the PUT
		method   string
		url      func(r *rig, url string) string
		body     string
		want     want
	}{
		"Accepted": {
			reason: "A valid response is stored and answered 200.",
			body:   valid, want: want{status: 200, message: "response accepted", stored: valid},
		},
		"POSTAccepted": {
			reason: "POST is accepted like PUT.",
			method: http.MethodPost, body: valid, want: want{status: 200, stored: valid},
		},
		"ExactlyAtLimit": {
			reason: "A body of exactly 4096 bytes is accepted.",
			body:   padTo(4096), want: want{status: 200, stored: padTo(4096)},
		},
		"Oversize": {
			reason: "A body of 4097 bytes is rejected with 413 naming the size.",
			body:   padTo(4097), want: want{status: 413, message: "the response body is 4097 bytes; the limit is 4096"},
		},
		"ForgedSignature": {
			reason: "A signature made with another key is refused.",
			url: func(r *rig, u string) string {
				other := New(Config{Store: r.store, Key: []byte("other-key"), ResponseURL: r.srv.URL})
				return other.responseURL(id, testNow.Add(time.Hour))
			},
			body: valid, want: want{status: 403, message: "signature is missing or wrong"},
		},
		"MissingSignature": {
			reason: "A URL without its signature is refused.",
			url:    func(_ *rig, u string) string { return u[:strings.Index(u, "&signature=")] },
			body:   valid, want: want{status: 403},
		},
		"TamperedExpiry": {
			reason: "Extending expires invalidates the signature.",
			url: func(_ *rig, u string) string {
				return strings.Replace(u, fmt.Sprint(testNow.Add(time.Hour).Unix()), fmt.Sprint(testNow.Add(2*time.Hour).Unix()), 1)
			},
			body: valid, want: want{status: 403},
		},
		"SignatureOfAnotherRequest": {
			reason: "A signature is bound to its request id.",
			url: func(r *rig, u string) string {
				other := r.p.responseURL("req-2", testNow.Add(time.Hour))
				return strings.Replace(u, u[strings.Index(u, "&signature="):], other[strings.Index(other, "&signature="):], 1)
			},
			body: valid, want: want{status: 403},
		},
		"Expired": {
			reason: "A correctly signed URL past its deadline answers 410.",
			url:    func(r *rig, _ string) string { return r.p.responseURL(id, testNow.Add(-time.Second)) },
			body:   valid, want: want{status: 410, message: "expired"},
		},
		"UnknownRequest": {
			reason: "A signed URL for a request that was never stored answers 404.",
			url:    func(r *rig, _ string) string { return r.p.responseURL("nope", testNow.Add(time.Hour)) },
			body:   respBody(cfnResource, "nope", nil), want: want{status: 404, message: "request nope is unknown"},
		},
		"WrongMethod": {
			reason: "GET is not a way to answer.",
			method: http.MethodGet, want: want{status: 405},
		},
		"StackIdMismatch": {
			reason: "A response naming another stack is refused.",
			body:   respBody(cfnResource, id, map[string]any{"StackId": "arn:other"}),
			want:   want{status: 400, message: `StackId is "arn:other"`},
		},
		"RequestIdMismatch": {
			reason: "A response naming another request is refused.",
			body:   respBody(cfnResource, id, map[string]any{"RequestId": "req-9"}),
			want:   want{status: 400, message: `RequestId is "req-9"`},
		},
		"LogicalResourceIdMismatch": {
			reason: "A response naming another resource is refused.",
			body:   respBody(cfnResource, id, map[string]any{"LogicalResourceId": "Other"}),
			want:   want{status: 400, message: `LogicalResourceId is "Other"`},
		},
		"BadStatus": {
			reason: "Status must be SUCCESS or FAILED.",
			body:   respBody(cfnResource, id, map[string]any{"Status": "OK"}),
			want:   want{status: 400, message: `Status is "OK"`},
		},
		"MissingPhysicalResourceId": {
			reason: "SUCCESS needs a PhysicalResourceId.",
			body:   respBody(cfnResource, id, map[string]any{"PhysicalResourceId": nil}),
			want:   want{status: 400, message: "Invalid PhysicalResourceId"},
		},
		"EmptyPhysicalResourceId": {
			reason: "An empty PhysicalResourceId is missing too.",
			body:   respBody(cfnResource, id, map[string]any{"PhysicalResourceId": ""}),
			want:   want{status: 400, message: "Invalid PhysicalResourceId"},
		},
		"PhysicalResourceIdTooLong": {
			reason: "CloudFormation physical ids are at most 1 KB.",
			body:   respBody(cfnResource, id, map[string]any{"PhysicalResourceId": strings.Repeat("p", 1025)}),
			want:   want{status: 400, message: "1025 bytes long; the limit is 1024"},
		},
		"ROSPhysicalResourceIdTooLong": {
			reason: "ROS physical ids are at most 255 bytes.",
			res:    rosResource,
			body:   respBody(rosResource, id, map[string]any{"PhysicalResourceId": strings.Repeat("p", 256)}),
			want:   want{status: 400, message: "256 bytes long; the limit is 255"},
		},
		"FailedWithoutPhysicalResourceId": {
			reason: "FAILED needs no PhysicalResourceId.",
			body:   respBody(cfnResource, id, map[string]any{"Status": "FAILED", "Reason": "boom", "PhysicalResourceId": nil}),
			want:   want{status: 200, stored: respBody(cfnResource, id, map[string]any{"Status": "FAILED", "Reason": "boom", "PhysicalResourceId": nil})},
		},
		"NotJSON": {
			reason: "The body must be JSON.",
			body:   `Status=SUCCESS`, want: want{status: 400, message: "not a JSON object"},
		},
		"TrailingGarbage": {
			reason: "The body must be one JSON object.",
			body:   valid + "x", want: want{status: 400},
		},
		"DataNotObject": {
			reason: "Data must be an object.",
			body:   respBody(cfnResource, id, map[string]any{"Data": []any{1}}), want: want{status: 400, message: "Data must be an object"},
		},
		"BadNoEcho": {
			reason: "NoEcho must be a boolean.",
			body:   respBody(cfnResource, id, map[string]any{"NoEcho": 3}), want: want{status: 400, message: "NoEcho"},
		},
		"ReplayedValid": {
			reason:   "A second valid response gets 200 and changes nothing.",
			answered: earlier, body: valid, want: want{status: 200, message: "already answered", stored: earlier},
		},
		"ReplayedInvalid": {
			reason:   "An invalid response to an answered request gets 200 too (clients treat anything else as failure).",
			answered: earlier, body: respBody(cfnResource, id, map[string]any{"Status": "MAYBE"}),
			want: want{status: 200, stored: earlier},
		},
		"ReplayedAfterExpiry": {
			reason:   "A late duplicate of an answered request gets 200.",
			answered: earlier,
			url:      func(r *rig, _ string) string { return r.p.responseURL(id, testNow.Add(-time.Minute)) },
			body:     valid, want: want{status: 200, stored: earlier},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := newRig(t)
			res := tc.res
			if res.Type == "" {
				res = cfnResource
			}
			url := storeRequest(t, r, res, id)
			if tc.answered != "" {
				if _, err := r.store.SaveResponse(context.Background(), id, []byte(tc.answered), testNow); err != nil {
					t.Fatal(err)
				}
			}
			if tc.url != nil {
				url = tc.url(r, url)
			}
			method := tc.method
			if method == "" {
				method = http.MethodPut
			}
			status, answer := put(t, method, url, tc.body)
			if status != tc.want.status {
				t.Errorf("%s\nstatus: got %d (%v), want %d", tc.reason, status, answer, tc.want.status)
			}
			if status >= 300 && answer["code"] != "response_rejected" {
				t.Errorf("%s\nerror code: got %q, want response_rejected", tc.reason, answer["code"])
			}
			if !strings.Contains(answer["message"], tc.want.message) {
				t.Errorf("%s\nmessage: got %q, want it to contain %q", tc.reason, answer["message"], tc.want.message)
			}
			if diff := cmp.Diff(tc.want.stored, string(r.store.response(t, id))); diff != "" {
				t.Errorf("%s\nstored response: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestResponseHandlerTransport: clients send no Content-Type, an empty one, or a chunked body
// without Content-Length; all are fine.
func TestResponseHandlerTransport(t *testing.T) {
	cases := map[string]struct {
		reason string
		header map[string]string
		body   func(s string) io.Reader
	}{
		"NoContentType":      {reason: "aws-lambda-go deletes Content-Type.", body: func(s string) io.Reader { return strings.NewReader(s) }},
		"EmptyContentType":   {reason: "cfn-response sends content-type: \"\".", header: map[string]string{"Content-Type": ""}, body: func(s string) io.Reader { return strings.NewReader(s) }},
		"ROSHeaders":         {reason: "ROS handlers send JSON and a Date.", header: map[string]string{"Content-Type": "application/json", "Date": "Tue, 26 Nov 2019 08:46:44 GMT"}, body: func(s string) io.Reader { return strings.NewReader(s) }},
		"ChunkedWithoutDate": {reason: "A body of unknown length is sent chunked.", body: func(s string) io.Reader { return io.MultiReader(strings.NewReader(s)) }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := newRig(t)
			url := storeRequest(t, r, cfnResource, "req-1")
			body := respBody(cfnResource, "req-1", nil)
			req, err := http.NewRequest(http.MethodPut, url, tc.body(body))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.header {
				req.Header[k] = []string{v}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s\nstatus: got %d, want 200", tc.reason, resp.StatusCode)
			}
			if got := string(r.store.response(t, "req-1")); got != body {
				t.Errorf("%s\nstored response: got %q, want %q", tc.reason, got, body)
			}
		})
	}
}

// TestResponseHandlerEscapedID: request ids are path-escaped in the URL and found again.
func TestResponseHandlerEscapedID(t *testing.T) {
	for _, id := range []string{"op-1/create/Thing", "with space", "ü"} {
		r := newRig(t)
		url := storeRequest(t, r, cfnResource, id)
		body := respBody(cfnResource, id, nil)
		if status, answer := put(t, http.MethodPut, url, body); status != http.StatusOK {
			t.Errorf("id %q: status %d %v, want 200", id, status, answer)
		}
		if got := string(r.store.response(t, id)); got != body {
			t.Errorf("id %q: stored %q, want %q", id, got, body)
		}
	}
}
