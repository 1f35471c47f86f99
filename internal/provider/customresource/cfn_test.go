package customresource

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
)

// lambdaHost serves a ServiceToken URL the way Lambda runs a function: it decodes the
// request into cfn.Event, acknowledges the POST, and runs the unmodified
// cfn.LambdaWrap(fn), which PUTs the response to the ResponseURL with http.DefaultClient.
type lambdaHost struct {
	t  *testing.T
	fn cfn.CustomResourceFunction

	wg      sync.WaitGroup
	mu      sync.Mutex
	events  []cfn.Event
	reasons []string // what LambdaWrap returned: non-empty when sending the response failed
}

func (h *lambdaHost) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var ev cfn.Event
	if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.events = append(h.events, ev)
	h.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		reason, err := cfn.LambdaWrap(h.fn)(context.Background(), ev)
		h.mu.Lock()
		defer h.mu.Unlock()
		if err != nil {
			h.t.Errorf("LambdaWrap returned error %v", err)
		}
		h.reasons = append(h.reasons, reason)
	}()
}

// greeter is an ordinary aws-lambda-go handler. It relies on CloudFormation's
// stringification (props["Count"].(string)), replaces itself when Name changes, fails when
// asked to, and deletes anything.
func greeter(_ context.Context, ev cfn.Event) (string, map[string]any, error) {
	props := ev.ResourceProperties
	switch ev.RequestType {
	case cfn.RequestDelete:
		return ev.PhysicalResourceID, nil, nil
	}
	if props["Fail"] == "true" {
		return "", nil, errors.New("greeter refuses: Fail is set")
	}
	name, _ := props["Name"].(string)
	count, ok := props["Count"].(string)
	if !ok {
		return "", nil, errors.New("Count is not a string: CloudFormation sends every scalar as a string")
	}
	id := "greeting-" + name
	if ev.RequestType == cfn.RequestUpdate && ev.OldResourceProperties["Name"] == name {
		id = ev.PhysicalResourceID
	}
	return id, map[string]any{"Message": "hello " + name, "Count": count, "Nested": map[string]any{"N": 1}}, nil
}

// TestAWSLambdaGoHandler drives the real aws-lambda-go cfn package through create, update
// with replacement, a failing create and deletes.
func TestAWSLambdaGoHandler(t *testing.T) {
	r := newRig(t)
	h := &lambdaHost{t: t, fn: greeter}
	token := r.handle("/fn", h)
	props := func(name string, fail bool) cty.Value {
		return tokenProps(token, map[string]cty.Value{"Name": cty.StringVal(name), "Count": cty.NumberIntVal(3), "Fail": cty.BoolVal(fail)})
	}
	outputs := func(name string) cty.Value {
		return obj(map[string]cty.Value{"Message": cty.StringVal("hello " + name), "Count": cty.StringVal("3"),
			"Nested": obj(map[string]cty.Value{"N": cty.NumberIntVal(1)})})
	}
	ctx := context.Background()

	created, err := r.p.Create(ctx, provider.CreateRequest{Resource: cfnResource, Token: "create-1", Props: props("world", false)})
	if err != nil || created.Diagnostics.HasErrors() {
		t.Fatalf("Create: %v %v", err, created.Diagnostics)
	}
	if created.ID != "greeting-world" || !created.Outputs.Equals(outputs("world")).True() {
		t.Errorf("Create: got %s %#v, want greeting-world %#v", created.ID, created.Outputs, outputs("world"))
	}

	same, err := r.p.Update(ctx, provider.UpdateRequest{Resource: cfnResource, Token: "update-1", ID: created.ID,
		OldProps: props("world", false), NewProps: tokenProps(token, map[string]cty.Value{"Name": cty.StringVal("world"), "Count": cty.StringVal("3"), "Extra": cty.True})})
	if err != nil || same.Diagnostics.HasErrors() || same.ID != "greeting-world" {
		t.Errorf("Update in place: %+v %v", same, err)
	}

	replaced, err := r.p.Update(ctx, provider.UpdateRequest{Resource: cfnResource, Token: "update-2", ID: created.ID,
		OldProps: props("world", false), NewProps: props("cairn", false)})
	if err != nil || replaced.Diagnostics.HasErrors() {
		t.Fatalf("Update: %v %v", err, replaced.Diagnostics)
	}
	if replaced.ID != "greeting-cairn" || !replaced.Outputs.Equals(outputs("cairn")).True() {
		t.Errorf("Update: got %s %#v, want the new id greeting-cairn (replacement) and %#v", replaced.ID, replaced.Outputs, outputs("cairn"))
	}

	other := cfnResource
	other.Name = "Broken"
	failed, err := r.p.Create(ctx, provider.CreateRequest{Resource: other, Token: "create-2", Props: props("x", true)})
	if err != nil {
		t.Fatalf("Create failing: %v", err)
	}
	if got := summaries(failed.Diagnostics); len(got) != 1 || got[0] != "greeter refuses: Fail is set" {
		t.Errorf("failing Create: diagnostics %q, want the handler's error as the summary", got)
	}
	if failed.ID != "create-2" {
		t.Errorf("failing Create: ID %q, want aws-lambda-go's fallback (the RequestId) so rollback can delete it", failed.ID)
	}

	for _, d := range []struct {
		res   provider.Resource
		token string
		id    string
	}{{other, "delete-1", failed.ID}, {cfnResource, "delete-2", "greeting-world"}, {cfnResource, "delete-3", "greeting-cairn"}} {
		del, err := r.p.Delete(ctx, provider.DeleteRequest{Resource: d.res, Token: d.token, ID: d.id, Props: props("x", false)})
		if err != nil || del.Diagnostics.HasErrors() {
			t.Errorf("Delete %s: %v %v", d.id, err, del.Diagnostics)
		}
	}

	h.wg.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, reason := range h.reasons {
		if reason != "" {
			t.Errorf("LambdaWrap call %d could not send its response: %s", i, reason)
		}
	}
	if len(h.events) != 7 {
		t.Errorf("handler got %d events, want 7", len(h.events))
	}
	if ev := h.events[2]; ev.RequestType != cfn.RequestUpdate || ev.OldResourceProperties["Name"] != "world" || ev.PhysicalResourceID != "greeting-world" {
		t.Errorf("replacing Update event: %+v", ev)
	}
}
