package api

import "encoding/json"

// StatePushRequest is the body of POST /v1/stacks/{name}/state: adopt a terraform state
// (format version 4) as the stack's resources, with the configuration in Source mapping its
// provider configurations. The stack's resources are replaced by the state's, all or none.
type StatePushRequest struct {
	Source DeployRequest   `json:"source"`
	State  json.RawMessage `json:"state"`
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
