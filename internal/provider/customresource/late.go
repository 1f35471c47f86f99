package customresource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-dev/cairn/internal/provider"
)

// A Create that ends without an answer because its call was cancelled (a user's cancel, the
// stack's timeout) leaves its request open: the handler may still be working, and its answer
// may still come within the request's deadline. The Create's response carries, as Private, the
// request's id (pendingCreate), which the engine stores with the failed resource even though
// the call ended with ctx's error, and passes back to the Delete that removes it (the rollback,
// or the stack's delete). That Delete first waits for the Create's answer, for the notice
// period (WaitNotice, a minute by default) at most and never past the request's deadline, and
// sends the Delete for the physical id the answer named: what the handler created is deleted
// instead of leaking. Bounded, because a cancel must end: CloudFormation waits out the whole
// ServiceTimeout (an hour by default), which is what users of it complain about most. The
// wait ends the request (an ended mark), so an answer after it gets 409.

// pendingCreate is the Private of a Create that ended without an answer.
type pendingCreate struct {
	Request string `json:"cairnOpenCreateRequest"`
}

func pendingPrivate(id string) []byte {
	b, _ := json.Marshal(pendingCreate{Request: id})
	return b
}

// pendingOf returns the Create request that private names, if it does.
func pendingOf(private []byte) (string, bool) {
	var pc pendingCreate
	if len(private) == 0 || json.Unmarshal(private, &pc) != nil || pc.Request == "" {
		return "", false
	}
	return pc.Request, true
}

// createAnswerID returns the physical id the answer to Create request id named, waiting for
// that answer (see above) when none has come yet; "" when none came or it named none.
func (p *Provider) createAnswerID(ctx context.Context, res provider.Resource, id string) (string, error) {
	stored, err := p.store.GetRequest(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("cannot read custom resource request %s: %w", id, err)
	}
	if stored.Stack != (call{res: res}).stackKey() || stored.LogicalID != res.Name {
		return "", nil // not this resource's: never act on another's answer
	}
	e, err := expectationOf(stored)
	if err != nil {
		return "", err
	}
	if stored.Response != nil {
		return outcomeOf(e, reqCreate, stored.Response).id, nil
	}
	notices, unsubscribe := p.subscribe(id)
	defer unsubscribe()
	wait := min(stored.Expires.Sub(p.now()), p.waitNotice)
	provider.ReportProgress(ctx, fmt.Sprintf("the Create request %s was not answered before its step ended: waiting up to %s for its answer "+
		"so that the Delete names what the handler created", id, wait.Round(time.Second)))
	bounded := stored // the wait ends at the bound, closing the request as its deadline would
	bounded.Expires = p.now().Add(wait)
	o, err := p.wait(ctx, call{kind: reqCreate, res: res, token: id}, e, bounded, wait, notices)
	if err != nil {
		return "", err
	}
	if o.id != "" {
		provider.ReportProgress(ctx, fmt.Sprintf("the Create request %s was answered late with PhysicalResourceId %s: deleting that", id, o.id))
	}
	return o.id, nil
}
