package kubesync

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// Client is a small JSON client of a kube API, enough for CRDs and custom objects: cairn's
// main binary links no Kubernetes library (docs/design/005-kube.md).
type Client struct {
	base  string
	token string
	http  *http.Client
}

// NewClient reaches the kube API at base, trusting the PEM CA in caFile, with token.
func NewClient(base, caFile, token string) (*Client, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no certificate in %s", caFile)
	}
	return &Client{base: base, token: token, http: &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}}, nil
}

// StatusError is a kube API error answer.
type StatusError struct {
	Code    int
	Message string
}

func (e *StatusError) Error() string { return fmt.Sprintf("kube API: %d: %s", e.Code, e.Message) }

// IsNotFound reports a 404 answer.
func IsNotFound(err error) bool {
	se, ok := err.(*StatusError)
	return ok && se.Code == http.StatusNotFound
}

// Do sends body (JSON, unless contentType says otherwise) to path and decodes the answer
// into out (nil: discard).
func (c *Client) Do(ctx context.Context, method, path, contentType string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		if contentType == "" {
			contentType = "application/json"
		}
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var st struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(data, &st)
		if st.Message == "" {
			st.Message = http.StatusText(resp.StatusCode)
		}
		return &StatusError{Code: resp.StatusCode, Message: st.Message}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// Apply applies obj server-side as the field manager cairn, taking over conflicting fields.
func (c *Client) Apply(ctx context.Context, path string, obj any) error {
	return c.Do(ctx, http.MethodPatch, path+"?fieldManager=cairn&force=true", "application/apply-patch+yaml", obj, nil)
}

// MergePatch applies a JSON merge patch.
func (c *Client) MergePatch(ctx context.Context, path string, patch any) error {
	return c.Do(ctx, http.MethodPatch, path+"?fieldManager=cairn", "application/merge-patch+json", patch, nil)
}
