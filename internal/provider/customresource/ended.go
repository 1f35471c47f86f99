package customresource

import (
	"context"
	"encoding/json"
	"fmt"
)

// A request whose step ended without an answer (its deadline passed, or the handler failed)
// is closed by storing an ended mark as its response: a Store keeps only the first response,
// so the mark and a late answer race on SaveResponse and exactly one wins. An answer that
// arrives after the mark is refused with 409 instead of being accepted and dropped; a call
// that finds the mark (a resumed one) fails with the mark's reason. The mark is never a valid
// response object (it has no Status), so no handler's answer can look like one.
const endedKey = "cairn:stepEnded"

func endedBody(reason string) []byte {
	b, _ := json.Marshal(map[string]string{endedKey: reason})
	return b
}

// endedReason returns the reason of an ended mark; ok is false for any other body.
func endedReason(body []byte) (reason string, ok bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || len(m) != 1 {
		return "", false
	}
	raw, ok := m[endedKey]
	if !ok || json.Unmarshal(raw, &reason) != nil {
		return "", false
	}
	return reason, true
}

// markEnded closes request id, whose step ends now without an answer, for reason. When an
// answer was stored first, it returns that answer instead (the caller uses it).
func (p *Provider) markEnded(ctx context.Context, id, reason string) (answer []byte, err error) {
	first, err := p.store.SaveResponse(context.WithoutCancel(ctx), id, endedBody(reason), p.now())
	if err != nil {
		return nil, fmt.Errorf("cannot close custom resource request %s: %w", id, err)
	}
	if first {
		return nil, nil
	}
	got, err := p.store.GetRequest(context.WithoutCancel(ctx), id)
	if err != nil {
		return nil, fmt.Errorf("cannot read custom resource request %s: %w", id, err)
	}
	if _, ended := endedReason(got.Response); ended {
		return nil, nil
	}
	return got.Response, nil
}
