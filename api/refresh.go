package api

// Drift actions: a Change in PreviewResponse.Drift or RefreshResponse.Drift says what happened
// to a resource outside cairn, as terraform's "Objects have changed outside of Terraform"
// does. Its Details hold the attributes that changed, Before as stored and After as read.
const (
	// DriftChanged is an object whose attributes differ from the stack's state ("has changed").
	DriftChanged = "Changed"
	// DriftDeleted is an object the provider no longer finds ("has been deleted"); the stack
	// forgets it and the next deploy creates it again.
	DriftDeleted = "Deleted"
)

// RefreshRequest is the body of POST /v1/stacks/{name}/refresh: read every resource of a
// Terraform-language stack back through its provider and store what is read, changing no
// real object, as terraform apply -refresh-only does. Source is the configuration that gives
// the providers their configuration and the data sources and outputs to evaluate; nil uses
// the configuration of the stack's last deploy.
type RefreshRequest struct {
	Source *DeployRequest `json:"source,omitempty"`
}

// RefreshResponse answers POST /v1/stacks/{name}/refresh.
type RefreshResponse struct {
	Stack string `json:"stack"`
	// Drift lists every resource found changed or deleted outside cairn, now stored as read.
	Drift []Change `json:"drift"`
	// OutputChanges lists the outputs whose stored value the refresh changed.
	OutputChanges []PropertyChange `json:"outputChanges,omitempty"`
	Diagnostics   []Diagnostic     `json:"diagnostics,omitempty"`
	// Note explains a refresh that read nothing (a CloudFormation-dialect stack, whose custom
	// resources have no read in their protocol).
	Note string `json:"note,omitempty"`
}
