package customresource

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/egress"
	"github.com/cairn-dev/cairn/internal/value"
)

// Response statuses.
const (
	statusSuccess = "SUCCESS"
	statusFailed  = "FAILED"
)

// expectation is what a response to one request must echo, and its dialect's limits.
type expectation struct {
	StackID   string `json:"StackId"`
	RequestID string `json:"RequestId"`
	LogicalID string `json:"LogicalResourceId"`
	// IntranetResponseURL is present only in ROS requests.
	IntranetResponseURL string `json:"IntranetResponseURL"`
}

// expectationOf reads the identity fields from a stored request body.
func expectationOf(r Request) (expectation, error) {
	var e expectation
	if err := json.Unmarshal(r.Body, &e); err != nil {
		return expectation{}, fmt.Errorf("cannot decode request %s: %w", r.ID, err)
	}
	return e, nil
}

func (e expectation) ros() bool { return e.IntranetResponseURL != "" }

// responseObject is a validated response.
type responseObject struct {
	Status     string
	Reason     string
	PhysicalID string
	NoEcho     bool
	Data       map[string]any
}

// rejection says why a response body was refused: the HTTP status for the sender, and
// whether the waiting call fails (fatal) or keeps waiting for a better response.
type rejection struct {
	status          int
	summary, detail string
	fatal           bool
}

func (r *rejection) message() string {
	if r.detail == "" {
		return r.summary
	}
	return r.summary + ": " + r.detail
}

func (r *rejection) diagnostic() diag.Diagnostic {
	return diag.Diagnostic{Severity: diag.Error, Summary: r.summary, Detail: r.detail}
}

func invalid(status int, summary, format string, args ...any) *rejection {
	return &rejection{status: status, summary: summary, detail: fmt.Sprintf(format, args...), fatal: true}
}

// validate checks a response body against the rules of CloudFormation (spec §1.4) and ROS
// (§2.3).
func (e expectation) validate(body []byte) (responseObject, *rejection) {
	if len(body) > maxResponseBytes {
		size := fmt.Sprintf("%d bytes", len(body))
		if len(body) > readLimit {
			size = fmt.Sprintf("more than %d bytes", readLimit)
		}
		return responseObject{}, invalid(http.StatusRequestEntityTooLarge, "Response object is too long",
			"the response body is %s; the limit is %d bytes (shorten Reason or Data)", size, maxResponseBytes)
	}
	var raw struct {
		Status             string          `json:"Status"`
		Reason             string          `json:"Reason"`
		PhysicalResourceID string          `json:"PhysicalResourceId"`
		StackID            string          `json:"StackId"`
		RequestID          string          `json:"RequestId"`
		LogicalResourceID  string          `json:"LogicalResourceId"`
		NoEcho             json.RawMessage `json:"NoEcho"`
		Data               json.RawMessage `json:"Data"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return responseObject{}, invalid(http.StatusBadRequest, "Invalid response object", "the response is not a JSON object of the expected shape: %v", err)
	}
	for _, f := range []struct{ name, got, want string }{
		{"StackId", raw.StackID, e.StackID},
		{"RequestId", raw.RequestID, e.RequestID},
		{"LogicalResourceId", raw.LogicalResourceID, e.LogicalID},
	} {
		if f.got != f.want {
			return responseObject{}, &rejection{status: http.StatusBadRequest, summary: "Response does not match its request",
				detail: fmt.Sprintf("%s is %q; the request's is %q (copy it from the request)", f.name, egress.Excerpt([]byte(f.got)), f.want)}
		}
	}
	out := responseObject{Status: raw.Status, Reason: raw.Reason, PhysicalID: raw.PhysicalResourceID}
	if raw.Status != statusSuccess && raw.Status != statusFailed {
		return responseObject{}, invalid(http.StatusBadRequest, "Invalid response object", "Status is %q; it must be SUCCESS or FAILED", egress.Excerpt([]byte(raw.Status)))
	}
	limit := maxPhysicalCFN
	if e.ros() {
		limit = maxPhysicalROS
	}
	switch {
	case raw.Status == statusSuccess && raw.PhysicalResourceID == "":
		return responseObject{}, invalid(http.StatusBadRequest, "Invalid PhysicalResourceId",
			"a SUCCESS response must carry a non-empty PhysicalResourceId")
	case len(raw.PhysicalResourceID) > limit:
		return responseObject{}, invalid(http.StatusBadRequest, "Invalid PhysicalResourceId",
			"the PhysicalResourceId is %d bytes long; the limit is %d", len(raw.PhysicalResourceID), limit)
	}
	switch s := string(bytes.TrimSpace(raw.NoEcho)); s {
	case "", "null", "false", `"false"`:
	case "true", `"true"`:
		out.NoEcho = true
	default:
		return responseObject{}, invalid(http.StatusBadRequest, "Invalid response object", "NoEcho is %s; it must be true or false", s)
	}
	if len(raw.Data) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw.Data))
		dec.UseNumber()
		if err := dec.Decode(&out.Data); err != nil {
			return responseObject{}, invalid(http.StatusBadRequest, "Invalid response object", "Data must be an object of attribute names to values")
		}
	}
	return out, nil
}

// outcome is the result of a call, before it becomes a Create/Update/DeleteResponse.
type outcome struct {
	id      string
	outputs cty.Value
	diags   diag.Diagnostics
	// notCreated, for a failed Create, says why nothing was created (the request never
	// reached the handler, or the handler refused it): provider.CreateResponse.NotCreated.
	notCreated string
}

// outcomeOf turns a stored (hence valid) response into the call's outcome.
func outcomeOf(e expectation, kind string, body []byte) outcome {
	if reason, ended := endedReason(body); ended {
		return failed(fmt.Sprintf("The %s request %s ended without a response", kind, e.RequestID), reason)
	}
	resp, bad := e.validate(body)
	if bad != nil {
		return outcome{diags: diag.Diagnostics{bad.diagnostic()}}
	}
	if resp.Status == statusFailed {
		reason := resp.Reason
		if reason == "" {
			reason = "The custom resource handler answered FAILED without a Reason"
		}
		detail := fmt.Sprintf("%s request %s failed", kind, e.RequestID)
		if resp.PhysicalID != "" {
			detail += fmt.Sprintf(" (PhysicalResourceId %s)", resp.PhysicalID)
		}
		return outcome{id: resp.PhysicalID, diags: diag.Diagnostics{{Severity: diag.Error, Summary: reason, Detail: detail}}}
	}
	outs, err := outputsOf(resp, e.ros())
	if err != nil {
		return outcome{id: resp.PhysicalID, diags: diag.Diagnostics{{Severity: diag.Error,
			Summary: "Invalid response object", Detail: fmt.Sprintf("cannot read Data: %v", err)}}}
	}
	return outcome{id: resp.PhysicalID, outputs: outs}
}

// outputsOf is one attribute per Data key (secret when NoEcho), plus for ROS the attribute
// Outputs holding the whole Data map (it wins over a Data key of that name).
func outputsOf(resp responseObject, ros bool) (cty.Value, error) {
	attrs := map[string]cty.Value{}
	for k, v := range resp.Data {
		cv, err := value.FromGo(v)
		if err != nil {
			return cty.NilVal, fmt.Errorf("%s: %w", k, err)
		}
		if resp.NoEcho {
			cv = value.Secret(cv)
		}
		attrs[k] = cv
	}
	if ros {
		whole := cty.EmptyObjectVal
		if len(attrs) > 0 {
			whole = cty.ObjectVal(copyAttrs(attrs))
		}
		attrs["Outputs"] = whole
	}
	if len(attrs) == 0 {
		return cty.EmptyObjectVal, nil
	}
	return cty.ObjectVal(attrs), nil
}

func copyAttrs(m map[string]cty.Value) map[string]cty.Value {
	out := make(map[string]cty.Value, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
