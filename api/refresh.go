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
// stack whose provider can read back through that provider and store what is read, changing no
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
	// NotChecked lists the resources whose provider cannot read them back (custom resources:
	// their protocol has no Read), which CloudFormation's drift detection reports NOT_CHECKED;
	// Note says why.
	NotChecked []string `json:"notChecked,omitempty"`
	Note       string   `json:"note,omitempty"`
}
