package function

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// The Lambda Runtime API (2018-06-01) that a function's process calls at
// http://$AWS_LAMBDA_RUNTIME_API. Each process gets its own listener, so an invocation handed
// out by /next is the one its worker is waiting on. Answers follow Lambda's: 202 for accepted
// responses and errors, 400 for an unknown request id, 413 for a result over the limit.
const runtimePrefix = "/2018-06-01/runtime"

func (w *worker) runtimeAPI() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+runtimePrefix+"/invocation/next", w.handleNext)
	mux.HandleFunc("POST "+runtimePrefix+"/invocation/{id}/response", w.handleResponse)
	mux.HandleFunc("POST "+runtimePrefix+"/invocation/{id}/error", w.handleError)
	mux.HandleFunc("POST "+runtimePrefix+"/init/error", w.handleInitError)
	mux.HandleFunc("/", func(rw http.ResponseWriter, r *http.Request) {
		// e.g. /2020-01-01/extension/register: aws-lambda-go logs a warning and goes on.
		runtimeError(rw, http.StatusNotFound, "UnknownAPI", "cairn does not implement "+r.Method+" "+r.URL.Path)
	})
	return mux
}

// handleNext blocks until the worker is given an invocation, then hands it over.
func (w *worker) handleNext(rw http.ResponseWriter, r *http.Request) {
	var inv *invocation
	select {
	case inv = <-w.next:
	case <-r.Context().Done():
		return
	case <-w.stop:
		runtimeError(rw, http.StatusInternalServerError, "Runtime.Stopping", "the function is being stopped")
		return
	}
	// The process asked after printing what its last request printed: log that under it.
	w.drainOutput()
	if prev := w.setCurrent(inv); prev != nil {
		prev.finish(Result{RequestID: prev.id, Error: &FuncError{Type: "Runtime.InvalidState",
			Message: "the runtime asked for the next invocation without answering this one"}})
	}
	h := rw.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
	h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(inv.deadline.UnixMilli(), 10))
	h.Set("Lambda-Runtime-Invoked-Function-Arn", inv.arn)
	h.Set("Lambda-Runtime-Trace-Id", inv.traceID)
	if inv.clientContext != "" {
		h.Set("Lambda-Runtime-Client-Context", inv.clientContext)
	}
	if inv.cognitoIdentity != "" {
		h.Set("Lambda-Runtime-Cognito-Identity", inv.cognitoIdentity)
	}
	rw.WriteHeader(http.StatusOK)
	_, _ = rw.Write(inv.payload)
}

func (w *worker) handleResponse(rw http.ResponseWriter, r *http.Request) {
	inv := w.current(r.PathValue("id"))
	if inv == nil {
		runtimeError(rw, http.StatusBadRequest, "InvalidRequestID", "no invocation "+r.PathValue("id")+" is running in this process")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxPayloadBytes+1))
	switch {
	case err != nil:
		inv.finish(Result{RequestID: inv.id, Error: &FuncError{Type: "Runtime.TruncatedResponse",
			Message: "cannot read the function's response: " + err.Error()}})
	case len(body) > MaxPayloadBytes:
		w.clearCurrent(inv)
		inv.finish(Result{RequestID: inv.id, Error: &FuncError{Type: "Function.ResponseSizeTooLarge",
			Message: fmt.Sprintf("Response payload size exceeded maximum allowed payload size (%d bytes).", MaxPayloadBytes)}})
		runtimeError(rw, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "the response is larger than the limit")
		return
	case r.Trailer.Get("Lambda-Runtime-Function-Error-Type") != "":
		// aws-lambda-go streams responses and reports a failed stream in trailers.
		inv.finish(Result{RequestID: inv.id, Error: &FuncError{Type: r.Trailer.Get("Lambda-Runtime-Function-Error-Type"),
			Message: r.Trailer.Get("Lambda-Runtime-Function-Error-Body")}})
	default:
		inv.finish(Result{RequestID: inv.id, Payload: body})
	}
	w.clearCurrent(inv)
	accepted(rw)
}

func (w *worker) handleError(rw http.ResponseWriter, r *http.Request) {
	inv := w.current(r.PathValue("id"))
	if inv == nil {
		runtimeError(rw, http.StatusBadRequest, "InvalidRequestID", "no invocation "+r.PathValue("id")+" is running in this process")
		return
	}
	fe := readFuncError(r)
	w.clearCurrent(inv)
	inv.finish(Result{RequestID: inv.id, Payload: marshalError(fe), Error: fe})
	accepted(rw)
}

func (w *worker) handleInitError(rw http.ResponseWriter, r *http.Request) {
	fe := readFuncError(r)
	w.mu.Lock()
	w.initErr = fe
	w.mu.Unlock()
	accepted(rw)
}

// readFuncError reads the error object a runtime posts; a body that is not one becomes the
// message.
func readFuncError(r *http.Request) *FuncError {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 256<<10))
	var fe FuncError
	if err := json.Unmarshal(body, &fe); err != nil || (fe.Message == "" && fe.Type == "") {
		fe = FuncError{Message: strings.TrimSpace(string(body))}
	}
	if t := r.Header.Get("Lambda-Runtime-Function-Error-Type"); t != "" && fe.Type == "" {
		fe.Type = t
	}
	if fe.Type == "" {
		fe.Type = "Unhandled"
	}
	return &fe
}

func marshalError(fe *FuncError) []byte {
	b, _ := json.Marshal(fe)
	return b
}

func accepted(rw http.ResponseWriter) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(http.StatusAccepted)
	_, _ = rw.Write([]byte(`{"status":"OK"}`))
}

func runtimeError(rw http.ResponseWriter, status int, typ, msg string) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	_ = json.NewEncoder(rw).Encode(FuncError{Type: typ, Message: msg})
}

// newRequestID is a random UUID (version 4), the shape of Lambda's request ids.
func newRequestID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// newTraceID is an X-Ray trace header, as Lambda passes in Lambda-Runtime-Trace-Id.
func newTraceID(epoch int64) string {
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return fmt.Sprintf("Root=1-%08x-%s;Parent=%s;Sampled=0", epoch, h[:24], h[24:40])
}
