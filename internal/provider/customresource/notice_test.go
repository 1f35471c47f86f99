package customresource

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
)

// TestStillWaitingNotice: a request left unanswered past WaitNotice is reported once, as
// progress, naming the RequestId, the request type and the response address, and never the
// signed query of the ResponseURL; the call keeps waiting until its deadline.
func TestStillWaitingNotice(t *testing.T) {
	r := newRig(t)
	r.p.waitNotice = 50 * time.Millisecond
	token := r.handle("/h", &fakeHandler{t: t}) // accepts, never answers
	var notes []string
	ctx := provider.WithProgress(context.Background(), func(reason string) { notes = append(notes, reason) })
	o, err := r.p.run(ctx, call{kind: reqCreate, res: cfnResource, token: "tok",
		props: tokenProps(token, map[string]cty.Value{"ServiceTimeout": cty.StringVal("1")})})
	if err != nil {
		t.Fatal(err)
	}
	if !o.diags.HasErrors() || !strings.Contains(o.diags.Error(), "did not receive a response") {
		t.Errorf("the call ended with %v, want the deadline's failure: the notice does not end the wait", o.diags)
	}
	if len(notes) != 1 {
		t.Fatalf("progress notes: got %q, want exactly one", notes)
	}
	for _, want := range []string{"Create request", "RequestId tok", r.srv.URL + "/v1/responses/tok", "must PUT", "ServiceTimeout"} {
		if !strings.Contains(notes[0], want) {
			t.Errorf("notice %q does not say %q", notes[0], want)
		}
	}
	for _, secret := range []string{"signature", "expires=", "?"} {
		if strings.Contains(notes[0], secret) {
			t.Errorf("notice %q holds %q: the signed query of the ResponseURL must never be shown", notes[0], secret)
		}
	}
}
