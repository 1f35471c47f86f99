package pulumistate

import (
	"encoding/json"
	"time"
)

// The deployment format's JSON, the fields cairn reads and writes (Pulumi's apitype.DeploymentV3;
// written here rather than imported, since apitype brings some thirty packages cairn has no use
// for).

// untypedDeployment is the file: a version and the deployment.
type untypedDeployment struct {
	Version    int             `json:"version"`
	Deployment json.RawMessage `json:"deployment"`
}

type deployment struct {
	Manifest          manifest          `json:"manifest"`
	SecretsProviders  *secretsProvider  `json:"secrets_providers,omitempty"`
	Resources         []resourceState   `json:"resources,omitempty"`
	PendingOperations []json.RawMessage `json:"pending_operations,omitempty"`
	Metadata          map[string]any    `json:"metadata,omitempty"`
}

type manifest struct {
	Time    time.Time `json:"time"`
	Magic   string    `json:"magic"`
	Version string    `json:"version"`
}

type secretsProvider struct {
	Type  string          `json:"type"`
	State json.RawMessage `json:"state,omitempty"`
}

type resourceState struct {
	URN                     string              `json:"urn"`
	Custom                  bool                `json:"custom"`
	Delete                  bool                `json:"delete,omitempty"`
	ID                      string              `json:"id,omitempty"`
	Type                    string              `json:"type"`
	Inputs                  map[string]any      `json:"inputs,omitempty"`
	Outputs                 map[string]any      `json:"outputs,omitempty"`
	Parent                  string              `json:"parent,omitempty"`
	Protect                 bool                `json:"protect,omitempty"`
	Dependencies            []string            `json:"dependencies,omitempty"`
	InitErrors              []string            `json:"initErrors,omitempty"`
	Provider                string              `json:"provider,omitempty"`
	PropertyDependencies    map[string][]string `json:"propertyDependencies,omitempty"`
	AdditionalSecretOutputs []string            `json:"additionalSecretOutputs,omitempty"`
	ImportID                string              `json:"importID,omitempty"`
	RetainOnDelete          bool                `json:"retainOnDelete,omitempty"`
	DeletedWith             string              `json:"deletedWith,omitempty"`
	ReplaceWith             []string            `json:"replaceWith,omitempty"`
	CustomTimeouts          *customTimeouts     `json:"customTimeouts,omitempty"`
	IgnoreChanges           []string            `json:"ignoreChanges,omitempty"`
	HideDiff                []string            `json:"hideDiff,omitempty"`
	ReplaceOnChanges        []string            `json:"replaceOnChanges,omitempty"`
	Created                 *time.Time          `json:"created,omitempty"`
	Modified                *time.Time          `json:"modified,omitempty"`
}

// customTimeouts are a resource's timeouts in seconds.
type customTimeouts struct {
	Create float64 `json:"create,omitempty"`
	Update float64 `json:"update,omitempty"`
	Delete float64 `json:"delete,omitempty"`
	Read   float64 `json:"read,omitempty"`
}

// deploymentVersion is the format version written and read.
const deploymentVersion = 3
