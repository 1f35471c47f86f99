package customresource

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
)

// fakeHandler is a custom-resource handler behind a ServiceToken URL. It records every
// request, answers the POST with answer (default 200 ""), and when respond is set PUTs
// respond(event) to the event's ResponseURL after answering, as a Lambda would.
type fakeHandler struct {
	t       *testing.T
	answer  func(ev map[string]any) (int, string)
	respond func(ev map[string]any) map[string]any

	mu       sync.Mutex
	bodies   [][]byte
	headers  []http.Header
	methods  []string
	puts     []int // statuses cairn answered the PUTs with
	putsDone sync.WaitGroup
}

func (f *fakeHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var ev map[string]any
	if err := json.Unmarshal(body, &ev); err != nil {
		f.t.Errorf("handler got a body that is not JSON: %v", err)
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.headers = append(f.headers, r.Header.Clone())
	f.methods = append(f.methods, r.Method)
	f.mu.Unlock()
	status, answer := http.StatusOK, ""
	if f.answer != nil {
		status, answer = f.answer(ev)
	}
	if f.respond != nil {
		if resp := f.respond(ev); resp != nil {
			f.putsDone.Add(1)
			go f.put(ev["ResponseURL"].(string), resp)
		}
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, answer)
}

func (f *fakeHandler) put(url string, resp map[string]any) {
	defer f.putsDone.Done()
	f.putNoWait(url, resp)
}

// putNoWait is put without putsDone.
func (f *fakeHandler) putNoWait(url string, resp map[string]any) {
	b, _ := json.Marshal(resp)
	req, _ := http.NewRequest(http.MethodPut, url, bytes.NewReader(b))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Errorf("PUT response: %v", err)
		return
	}
	res.Body.Close()
	f.mu.Lock()
	f.puts = append(f.puts, res.StatusCode)
	f.mu.Unlock()
}

// requests returns the decoded request objects received so far.
func (f *fakeHandler) requests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, b := range f.bodies {
		var ev map[string]any
		_ = json.Unmarshal(b, &ev)
		out = append(out, ev)
	}
	return out
}

func (f *fakeHandler) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

// succeed answers every request with SUCCESS, keeping the physical id on Update/Delete and
// using "phys-<LogicalResourceId>" on Create, with data.
func succeed(data map[string]any) func(ev map[string]any) map[string]any {
	return func(ev map[string]any) map[string]any {
		id, _ := ev["PhysicalResourceId"].(string)
		if id == "" {
			id = "phys-" + ev["LogicalResourceId"].(string)
		}
		resp := answerTo(ev, "SUCCESS")
		resp["PhysicalResourceId"] = id
		if data != nil {
			resp["Data"] = data
		}
		return resp
	}
}

// answerTo is a response to ev with its identity fields and status.
func answerTo(ev map[string]any, status string) map[string]any {
	return map[string]any{"Status": status, "StackId": ev["StackId"], "RequestId": ev["RequestId"],
		"LogicalResourceId": ev["LogicalResourceId"]}
}
