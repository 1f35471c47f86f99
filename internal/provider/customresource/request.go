package customresource

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/value"
)

// Request types.
const (
	reqCreate = "Create"
	reqUpdate = "Update"
	reqDelete = "Delete"
)

// Default timeouts: CloudFormation's ServiceTimeout default, ROS's Timeout defaults.
const (
	defaultTimeoutCFN  = 3600 * time.Second
	defaultTimeoutROS  = 60 * time.Second
	defaultTimeoutSync = 10 * time.Second
)

// call is one Create, Update or Delete.
type call struct {
	kind     string
	res      provider.Resource
	token    string    // the engine's Token: RequestId
	physical string    // PhysicalResourceId (Update, Delete)
	props    cty.Value // ResourceProperties source
	oldProps cty.Value // OldResourceProperties source (Update)
	timeout  time.Duration
}

// serviceToken parses the call's ServiceToken property.
func (c call) serviceToken() (string, serviceToken, error) {
	props, _ := c.props.UnmarkDeep()
	v, ok := value.Get(props, propToken)
	if !ok || v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
		return "", serviceToken{}, fmt.Errorf("ServiceToken is required and must be a string")
	}
	tok, err := parseToken(v.AsString())
	return v.AsString(), tok, err
}

// timeoutFor is how long the call waits for a response: the engine's Timeout if set, else
// the ServiceTimeout (CloudFormation) or Timeout (ROS) property, else the dialect's default.
func timeoutFor(c call, tok serviceToken) time.Duration {
	if c.timeout > 0 {
		return c.timeout
	}
	prop, limit, def := propCFNTimeout, maxTimeoutCFN, defaultTimeoutCFN
	if isROS(c.res) {
		prop, limit, def = propROSTimeout, maxTimeoutROS, defaultTimeoutROS
	}
	if tok.sync {
		def = defaultTimeoutSync
	}
	if v, ok := value.Get(c.props, prop); ok {
		if n, reason := seconds(v, limit); reason == "" && n > 0 {
			return time.Duration(n) * time.Second
		}
	}
	return def
}

// requestObject builds the request JSON sent to the handler: CloudFormation's shape (spec
// §1.2, properties stringified) or ROS's (§2.2, Parameters as they are).
func requestObject(c call, rawToken, responseURL string) ([]byte, error) {
	obj := map[string]any{
		"RequestType":       c.kind,
		"RequestId":         c.token,
		"ResponseURL":       responseURL,
		"StackId":           c.res.StackID,
		"LogicalResourceId": c.res.Name,
		"ResourceType":      c.res.Type,
	}
	if c.kind != reqCreate {
		obj["PhysicalResourceId"] = c.physical
	}
	props := func(v cty.Value) (any, error) { return cfnProperties(v) }
	if isROS(c.res) {
		obj["IntranetResponseURL"] = responseURL
		obj["InnerResponseURL"] = responseURL
		obj["StackName"] = c.res.StackName
		obj["ResourceOwnerId"] = c.res.AccountID
		obj["CallerId"] = c.res.AccountID
		obj["RegionId"] = c.res.Region
		props = rosParameters
	} else {
		obj["ServiceToken"] = rawToken
	}
	var err error
	if obj["ResourceProperties"], err = props(c.props); err != nil {
		return nil, fmt.Errorf("cannot encode ResourceProperties: %w", err)
	}
	if c.kind == reqUpdate {
		if obj["OldResourceProperties"], err = props(c.oldProps); err != nil {
			return nil, fmt.Errorf("cannot encode OldResourceProperties: %w", err)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep the ResponseURL's '&' readable for naive handlers
	if err := enc.Encode(obj); err != nil {
		return nil, fmt.Errorf("cannot encode request: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// cfnProperties is every property, scalars stringified recursively, as CloudFormation sends.
func cfnProperties(v cty.Value) (any, error) {
	if v == cty.NilVal || v.IsNull() {
		return map[string]any{}, nil
	}
	return toJSONish(value.Stringify(v))
}

// rosParameters is the contents of the Parameters property, JSON types kept.
func rosParameters(v cty.Value) (any, error) {
	if v == cty.NilVal || v.IsNull() {
		return map[string]any{}, nil
	}
	params, ok := value.Get(v, propParameters)
	if !ok || params.IsNull() {
		return map[string]any{}, nil
	}
	return toJSONish(params)
}

// toJSONish converts a wholly known value to JSON-shaped Go data without its marks, dropping
// null attributes (CloudFormation has no null property values: AWS::NoValue removes one).
func toJSONish(v cty.Value) (any, error) {
	g, err := value.ToGo(v)
	if err != nil {
		return nil, err
	}
	return dropNulls(g), nil
}

func dropNulls(g any) any {
	switch t := g.(type) {
	case map[string]any:
		for k, e := range t {
			if e == nil {
				delete(t, k)
				continue
			}
			t[k] = dropNulls(e)
		}
	case []any:
		for i, e := range t {
			t[i] = dropNulls(e)
		}
	}
	return g
}

func sortStrings(s []string) { slices.Sort(s) }

// stackKey is what the call's request is filed under in the store: the stack's key (its
// tenant and name) in a run, its name otherwise.
func (c call) stackKey() string {
	if c.res.StackKey != "" {
		return c.res.StackKey
	}
	return c.res.StackName
}
