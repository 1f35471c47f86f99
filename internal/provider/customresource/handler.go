package customresource

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Responses are bodies of at most maxResponseBytes; the handler reads a little more than
// that so that it can say how large a rejected body was.
const readLimit = 1 << 20

// responseURL returns the signed ResponseURL of request id.
func (p *Provider) responseURL(id string, expires time.Time) string {
	exp := strconv.FormatInt(expires.Unix(), 10)
	return p.base + "/v1/responses/" + url.PathEscape(id) + "?expires=" + exp + "&signature=" + p.sign(id, exp)
}

// sign is hex(HMAC-SHA256(key, id + "\n" + expires)).
func (p *Provider) sign(id, expires string) string {
	m := hmac.New(sha256.New, p.key)
	m.Write([]byte(id + "\n" + expires))
	return hex.EncodeToString(m.Sum(nil))
}

// ResponseHandler serves PUT <anything>/responses/{id}?expires=..&signature=.. (POST is
// accepted as well). The server mounts it at /v1/responses/. Statuses:
//
//	200 accepted, or ignored because the request was answered already
//	409 the request's step already ended without a response (its deadline passed or its
//	    handler failed): this response came too late and is not used
//	400 malformed or invalid response (the waiting call fails, unless only StackId,
//	    RequestId or LogicalResourceId mismatched: then it keeps waiting)
//	403 missing or wrong signature
//	404 unknown request id
//	405 another method
//	410 the URL expired (its request's deadline passed)
//	413 body over 4096 bytes (the waiting call fails, naming the size)
//
// Error bodies are {"code":"response_rejected","message":"..."}.
func (p *Provider) ResponseHandler() http.Handler { return http.HandlerFunc(p.serveResponse) }

func (p *Provider) serveResponse(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST, PUT")
		p.reject(w, "", http.StatusMethodNotAllowed, "method %s is not allowed; PUT the response object", r.Method)
		return
	}
	id, ok := requestIDOf(r.URL)
	if !ok {
		p.reject(w, "", http.StatusNotFound, "no request id in the response URL")
		return
	}
	q := r.URL.Query()
	exp, sig := q.Get("expires"), q.Get("signature")
	if exp == "" || sig == "" || !hmac.Equal([]byte(sig), []byte(p.sign(id, exp))) {
		p.reject(w, id, http.StatusForbidden, "the response URL's signature is missing or wrong; use the ResponseURL exactly as it was sent")
		return
	}
	ctx := r.Context()
	stored, err := p.store.GetRequest(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		p.reject(w, id, http.StatusNotFound, "request %s is unknown", id)
		return
	case err != nil:
		p.log.Error("custom resources: cannot read request", "request_id", id, "error", err)
		p.reject(w, id, http.StatusInternalServerError, "cannot read request %s", id)
		return
	}
	if stored.Response != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, readLimit))
		if p.refuseEnded(w, id, stored.Response) {
			return
		}
		p.log.Info("custom resources: request already answered; later response ignored", "request_id", id)
		p.reply(w, http.StatusOK, "request already answered; this response was ignored")
		return
	}
	if unix, err := strconv.ParseInt(exp, 10, 64); err != nil || !p.now().Before(time.Unix(unix, 0)) {
		p.reject(w, id, http.StatusGone, "the response URL expired at %s: the deadline for request %s passed", time.Unix(unix, 0).UTC().Format(time.RFC3339), id)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, readLimit+1))
	if err != nil {
		p.reject(w, id, http.StatusBadRequest, "cannot read the response body: %v", err)
		return
	}
	expect, err := expectationOf(stored)
	if err != nil {
		p.log.Error("custom resources: cannot decode stored request", "request_id", id, "error", err)
		p.reject(w, id, http.StatusInternalServerError, "cannot read request %s", id)
		return
	}
	if _, bad := expect.validate(body); bad != nil {
		if bad.fatal {
			p.notify(id, notice{reject: bad})
		}
		p.reject(w, id, bad.status, "%s", bad.message())
		return
	}
	first, err := p.store.SaveResponse(ctx, id, body, p.now())
	if err != nil {
		p.log.Error("custom resources: cannot save response", "request_id", id, "error", err)
		p.reject(w, id, http.StatusInternalServerError, "cannot save the response to request %s", id)
		return
	}
	if !first {
		if got, err := p.store.GetRequest(ctx, id); err == nil && p.refuseEnded(w, id, got.Response) {
			return
		}
		p.log.Info("custom resources: request already answered; later response ignored", "request_id", id)
		p.reply(w, http.StatusOK, "request already answered; this response was ignored")
		return
	}
	p.log.Info("custom resources: response accepted", "request_id", id, "stack", stored.Stack, "logical_id", stored.LogicalID)
	p.notify(id, notice{body: body})
	p.reply(w, http.StatusOK, "response accepted")
}

// refuseEnded answers 409 when stored is the ended mark of request id: its step ended without
// an answer, so this one comes too late to be used.
func (p *Provider) refuseEnded(w http.ResponseWriter, id string, stored []byte) bool {
	reason, ended := endedReason(stored)
	if !ended {
		return false
	}
	p.reject(w, id, http.StatusConflict, "request %s already ended without a response (%s); this response came too late "+
		"and was not used: what it created, if anything, is not managed by cairn", id, reason)
	return true
}

// requestIDOf returns the path segment after the last "/responses/".
func requestIDOf(u *url.URL) (string, bool) {
	path := u.EscapedPath()
	i := strings.LastIndex(path, "/responses/")
	if i < 0 {
		return "", false
	}
	id, err := url.PathUnescape(path[i+len("/responses/"):])
	if err != nil || id == "" {
		return "", false
	}
	return id, true
}

func (p *Provider) reject(w http.ResponseWriter, id string, status int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if id != "" && status != http.StatusInternalServerError {
		p.log.Warn("custom resources: response rejected", "request_id", id, "status", status, "reason", msg)
	}
	writeJSON(w, status, map[string]string{"code": "response_rejected", "message": msg})
}

func (p *Provider) reply(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"message": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
