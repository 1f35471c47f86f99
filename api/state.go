package api

import "encoding/json"

// StatePassphraseHeader carries the passphrase that seals a pulled state's secrets (or opens a
// pushed one's) where the format seals them, as Pulumi's passphrase secrets provider does. A
// header, not a query parameter, so that it never lands in an access log.
const StatePassphraseHeader = "Cairn-State-Passphrase"

// StatePullOptions are how GET /v1/stacks/{name}/state writes secrets: sealed with the
// passphrase of the StatePassphraseHeader, or in clear with ?show-secrets=true.
type StatePullOptions struct {
	Passphrase  string `json:"-"`
	ShowSecrets bool   `json:"-"`
}

// StatePushRequest is the body of POST /v1/stacks/{name}/state: adopt a terraform state
// (format version 4) as the stack's resources, with the configuration in Source mapping its
// provider configurations. The stack's resources are replaced by the state's, all or none.
type StatePushRequest struct {
	Source DeployRequest   `json:"source"`
	State  json.RawMessage `json:"state"`
	// Passphrase opens the state's sealed secrets (a Pulumi deployment); never stored.
	Passphrase string `json:"passphrase,omitempty"`
}

// StatePushResponse says what a push adopted.
type StatePushResponse struct {
	Stack     string `json:"stack"`
	Lineage   string `json:"lineage"`
	Serial    uint64 `json:"serial"`
	Resources int    `json:"resources"` // resource instances adopted (data sources are read again, not kept)
}

// ActionForget is a resource a removed block (lifecycle { destroy = false }) takes out of the
// stack without destroying it.
const ActionForget = "Forget"
