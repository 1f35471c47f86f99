package customresource

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"
)

// documentedStatuses are the answers ResponseHandler's comment lists (500 is for a store that
// fails, which the in-memory one never does).
var documentedStatuses = map[int]bool{200: true, 400: true, 403: true, 404: true, 405: true, 410: true, 413: true}

// FuzzResponseHandler sends arbitrary responses to the response URL of a stored request:
// the body, the query's expires and signature (or, with sign, the signature cairn would make
// for that expires), the request id of the path and the method. The handler must never
// panic, must answer only the documented statuses with a JSON message, must store a body
// exactly when it answers "response accepted", and what it stores must decode into an
// outcome without panicking. Seeds are in testdata/fuzz/FuzzResponseHandler.
func FuzzResponseHandler(f *testing.F) {
	valid := respBody(cfnResource, "req-1", nil)
	exp := strconv.FormatInt(testNow.Add(time.Hour).Unix(), 10)
	f.Add([]byte(valid), exp, "", true, "req-1", false, false)
	f.Add([]byte(respBody(rosResource, "req-1", nil)), exp, "", true, "req-1", true, false)
	f.Add([]byte(valid), exp, "00", false, "req-1", false, false)
	f.Add([]byte(valid), "1", "", true, "req-1", false, true)
	f.Fuzz(func(t *testing.T, body []byte, expires, signature string, sign bool, id string, ros, post bool) {
		store := newMemStore()
		p := New(Config{Store: store, Key: []byte("test-key"), ResponseURL: "http://cairn.test/", Client: http.DefaultClient,
			Now: func() time.Time { return testNow }, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		defer p.Close()
		res := cfnResource
		if ros {
			res = rosResource
		}
		const stored = "req-1"
		c := call{kind: reqCreate, res: res, token: stored, props: obj(map[string]cty.Value{"ServiceToken": cty.StringVal("https://h")})}
		reqBody, err := requestObject(c, "https://h", p.responseURL(stored, testNow.Add(time.Hour)))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := store.PutRequest(context.Background(), Request{ID: stored, Stack: res.StackName, LogicalID: res.Name,
			Body: reqBody, Expires: testNow.Add(time.Hour), Sent: true}); err != nil {
			t.Fatal(err)
		}
		if sign {
			signature = p.sign(id, expires)
		}
		method := http.MethodPut
		if post {
			method = http.MethodPost
		}
		u := &url.URL{Path: "/v1/responses/" + id, RawQuery: "expires=" + expires + "&signature=" + signature}
		req := &http.Request{Method: method, URL: u, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body)),
			ContentLength: int64(len(body)), Host: "cairn.test"}
		req = req.WithContext(context.Background())
		w := httptest.NewRecorder()
		p.ResponseHandler().ServeHTTP(w, req)

		if !documentedStatuses[w.Code] {
			t.Fatalf("status %d is not one the handler documents (%s)", w.Code, w.Body)
		}
		var answer map[string]string
		if err := json.Unmarshal(w.Body.Bytes(), &answer); err != nil || answer["message"] == "" {
			t.Fatalf("answer %q is not a JSON message: %v", w.Body, err)
		}
		if w.Code != 200 && answer["code"] != "response_rejected" {
			t.Errorf("status %d with code %q, want response_rejected", w.Code, answer["code"])
		}
		got := store.rows[stored].Response
		switch accepted := answer["message"] == "response accepted"; {
		case accepted && !bytes.Equal(got, body):
			t.Fatalf("accepted, but the store holds %q", got)
		case !accepted && got != nil:
			t.Fatalf("answered %d %q, but the store holds %q", w.Code, answer["message"], got)
		case accepted:
			e, err := expectationOf(store.rows[stored])
			if err != nil {
				t.Fatal(err)
			}
			outcomeOf(e, reqCreate, got)
		}
	})
}
