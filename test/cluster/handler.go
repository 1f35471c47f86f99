package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"
)

// Handler is a custom-resource handler on loopback. It answers each request's POST at once
// and PUTs its response to the ResponseURL (the load balancer) after Delay, retrying for up to
// two minutes until a replica takes it, as a patient Lambda does. An Update whose Replace
// property changed answers a new physical id, so cairn deletes the old one (a replacement).
// It records what it saw, to count duplicates, orphans and lost responses.
type Handler struct {
	URL   string
	Delay time.Duration

	mu       sync.Mutex
	creates  map[string]map[string]bool // StackId/LogicalResourceId -> Create RequestIds
	live     map[string]bool            // physical ids created and not deleted
	answered map[string]time.Time       // RequestId -> when a replica took the response
	received map[string]time.Time       // RequestId -> when the POST arrived
	lost     int                        // responses no replica took in time
	requests int
	replaced map[string]bool // RequestIds of Updates answered with a new physical id
	inFlight sync.WaitGroup
}

// NewHandler starts a handler, stopped when tb ends.
func NewHandler(tb testing.TB, delay time.Duration) *Handler {
	h := &Handler{Delay: delay, creates: map[string]map[string]bool{}, live: map[string]bool{},
		answered: map[string]time.Time{}, received: map[string]time.Time{}, replaced: map[string]bool{}}
	srv := httptest.NewServer(h)
	tb.Cleanup(func() { srv.Close() })
	h.URL = srv.URL
	return h
}

var putClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var ev map[string]any
	if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusOK)
	str := func(k string) string { s, _ := ev[k].(string); return s }
	reqID, kind, key := str("RequestId"), str("RequestType"), str("StackId")+"/"+str("LogicalResourceId")
	phys := str("PhysicalResourceId")
	h.mu.Lock()
	h.requests++
	if _, seen := h.received[reqID]; !seen {
		h.received[reqID] = time.Now()
	}
	switch kind {
	case "Create":
		if h.creates[key] == nil {
			h.creates[key] = map[string]bool{}
		}
		h.creates[key][reqID] = true
		phys = fmt.Sprintf("%s-%s", str("LogicalResourceId"), reqID[:8])
		h.live[phys] = true
	case "Update":
		props, _ := ev["ResourceProperties"].(map[string]any)
		old, _ := ev["OldResourceProperties"].(map[string]any)
		if fmt.Sprint(props["Replace"]) != fmt.Sprint(old["Replace"]) {
			phys = fmt.Sprintf("%s-%s", str("LogicalResourceId"), reqID[:8])
			h.live[phys] = true
			h.replaced[reqID] = true
		}
	case "Delete":
		delete(h.live, phys)
	}
	h.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"Status": "SUCCESS", "PhysicalResourceId": phys, "StackId": ev["StackId"],
		"RequestId": reqID, "LogicalResourceId": ev["LogicalResourceId"], "Data": map[string]any{"Value": phys}})
	h.inFlight.Add(1)
	go h.respond(str("ResponseURL"), reqID, body)
}

func (h *Handler) respond(url, reqID string, body []byte) {
	defer h.inFlight.Done()
	time.Sleep(h.Delay)
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		req, _ := http.NewRequest(http.MethodPut, url, bytes.NewReader(body))
		resp, err := putClient.Do(req)
		if err != nil {
			continue // the replica died mid-request, or none is up: try again
		}
		resp.Body.Close()
		if resp.StatusCode/100 == 2 || resp.StatusCode == http.StatusGone || resp.StatusCode == http.StatusConflict {
			// Taken, or the request ended (its operation was cancelled or already answered).
			h.mu.Lock()
			if _, ok := h.answered[reqID]; !ok {
				h.answered[reqID] = time.Now()
			}
			h.mu.Unlock()
			return
		}
	}
	h.mu.Lock()
	h.lost++
	h.mu.Unlock()
}

// Report is what a handler saw.
type Report struct {
	Requests         int      // POSTs received (a resumed call may be sent again)
	DuplicateCreates int      // resources created by more than one distinct request
	Orphans          []string // physical ids created and never deleted
	LostResponses    int      // responses no replica took within two minutes
	Replacements     int      // updates answered with a new physical id (cairn then deletes the old)
}

// Report waits for the responses in flight and says what the handler saw.
func (h *Handler) Report() Report {
	h.inFlight.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	rep := Report{Requests: h.requests, LostResponses: h.lost, Replacements: len(h.replaced)}
	for _, ids := range h.creates {
		if len(ids) > 1 {
			rep.DuplicateCreates++
		}
	}
	for id := range h.live {
		rep.Orphans = append(rep.Orphans, id)
	}
	sort.Strings(rep.Orphans)
	return rep
}

// Latencies are, for every request answered, the time from its POST's arrival to a replica
// taking its response (including the handler's Delay).
func (h *Handler) Latencies() []time.Duration {
	h.inFlight.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []time.Duration
	for id, at := range h.answered {
		out = append(out, at.Sub(h.received[id]))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
