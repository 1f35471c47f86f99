package customresource

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/value"
)

// Dialects (template.Dialect values; this package does not import template).
const (
	dialectCFN = "cloudformation"
	dialectROS = "ros"
)

// Resource types served besides Custom::*.
const (
	typeCFN = "AWS::CloudFormation::CustomResource"
	typeROS = "ALIYUN::ROS::CustomResource"
)

// Property names.
const (
	propToken      = "ServiceToken"
	propCFNTimeout = "ServiceTimeout" // CloudFormation
	propROSTimeout = "Timeout"        // ROS
	propParameters = "Parameters"     // ROS
)

// Limits from the CloudFormation and ROS documentation.
const (
	maxTypeNameCFN   = 60
	maxTypeNameROS   = 68
	maxTimeoutCFN    = 3600
	maxTimeoutROS    = 43200
	maxPhysicalCFN   = 1024
	maxPhysicalROS   = 255
	maxResponseBytes = 4096
)

// isROS reports whether r is in a ROS stack; "" counts as CloudFormation.
func isROS(r provider.Resource) bool { return r.Dialect == dialectROS }

// Check validates the type name, ServiceToken and timeout; see docs/custom-resources.md.
func (p *Provider) Check(ctx context.Context, req provider.CheckRequest) (provider.CheckResponse, error) {
	resp := provider.CheckResponse{Props: req.Props}
	fail := func(prop, format string, args ...any) {
		resp.Failures = append(resp.Failures, provider.CheckFailure{Property: prop, Reason: fmt.Sprintf(format, args...)})
	}
	res := req.Resource
	if res.Dialect != "" && res.Dialect != dialectCFN && res.Dialect != dialectROS {
		fail("", "custom resources are not supported in %q templates", res.Dialect)
		return resp, nil
	}
	if reason := checkType(res.Type, isROS(res)); reason != "" {
		fail("", "%s", reason)
	}
	props, _ := req.Props.UnmarkDeep()
	switch {
	case props == cty.NilVal || props.IsNull():
		fail(propToken, "ServiceToken is required")
		return resp, nil
	case !props.IsKnown():
		return resp, nil
	case !props.Type().IsObjectType() && !props.Type().IsMapType():
		fail("", "Properties must be an object")
		return resp, nil
	}
	if reason := checkServiceToken(props); reason != "" {
		fail(propToken, "%s", reason)
	} else if reason := p.checkFunctionToken(ctx, props); reason != "" {
		fail(propToken, "%s", reason)
	} else if reason := p.checkTokenPolicy(ctx, props); reason != "" {
		fail(propToken, "%s", reason)
	}
	if !isROS(res) {
		if v, ok := value.Get(props, propCFNTimeout); ok {
			if _, reason := seconds(v, maxTimeoutCFN); reason != "" {
				fail(propCFNTimeout, "ServiceTimeout %s", reason)
			}
		}
		return resp, nil
	}
	for _, k := range value.Keys(props) {
		v, _ := value.Get(props, k)
		switch k {
		case propToken:
		case propROSTimeout:
			if _, reason := seconds(v, maxTimeoutROS); reason != "" {
				fail(propROSTimeout, "Timeout %s", reason)
			}
		case propParameters:
			if v.IsKnown() && !v.IsNull() && !v.Type().IsObjectType() && !v.Type().IsMapType() {
				fail(propParameters, "Parameters must be a map")
			}
		default:
			fail(k, "%s takes only ServiceToken, Timeout and Parameters; put %s under Parameters to send it to the handler", res.Type, k)
		}
	}
	return resp, nil
}

// checkType returns why typ is not a custom-resource type of the dialect, or "".
func checkType(typ string, ros bool) string {
	switch typ {
	case typeCFN:
		if ros {
			return typeCFN + " is a CloudFormation type; ROS templates use " + typeROS + " or Custom::<Name>"
		}
		return ""
	case typeROS:
		if !ros {
			return typeROS + " is a ROS type; CloudFormation templates use " + typeCFN + " or Custom::<Name>"
		}
		return ""
	}
	name, ok := strings.CutPrefix(typ, "Custom::")
	if !ok {
		return fmt.Sprintf("%s is not a custom resource type", typ)
	}
	limit := maxTypeNameCFN
	if ros {
		limit = maxTypeNameROS
	}
	switch {
	case name == "":
		return "the custom resource type needs a name after Custom::"
	case len(name) > limit:
		return fmt.Sprintf("the custom resource type name %q is %d characters long; the limit is %d", name, len(name), limit)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '@' || c == '-') {
			return fmt.Sprintf("the custom resource type name %q contains %q; use letters, digits and _@-", name, c)
		}
	}
	return ""
}

// checkServiceToken returns why the ServiceToken property is unusable, or "" (also when it
// is not known yet).
func checkServiceToken(props cty.Value) string {
	v, ok := value.Get(props, propToken)
	switch {
	case !ok || v.IsNull():
		return "ServiceToken is required"
	case !v.IsKnown():
		return ""
	case v.Type() != cty.String:
		return "ServiceToken must be a string"
	}
	if _, err := parseToken(v.AsString()); err != nil {
		return err.Error()
	}
	return ""
}

// checkTokenPolicy is Check's reason for an http(s) or web: token whose URL alone tells that
// the service-token policy refuses it (an address literal, a host not in the allow list), ""
// otherwise: a host name the policy might allow is decided when cairn connects.
func (p *Provider) checkTokenPolicy(ctx context.Context, props cty.Value) string {
	v, ok := value.Get(props, propToken)
	if !ok || v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
		return ""
	}
	tok, err := parseToken(v.AsString())
	if err != nil || tok.url == "" {
		return ""
	}
	if err := p.policy.CheckURL(ctx, tok.url); err != nil {
		return "ServiceToken: " + err.Error()
	}
	return ""
}

// seconds parses a timeout property (a string or a number holding an integer from 1 to max).
// An unknown value yields 0 and no reason.
func seconds(v cty.Value, limit int) (int, string) {
	v, _ = v.Unmark()
	if !v.IsKnown() {
		return 0, ""
	}
	if v.IsNull() {
		return 0, fmt.Sprintf("must be an integer from 1 to %d", limit)
	}
	var n int
	switch v.Type() {
	case cty.String:
		i, err := strconv.Atoi(strings.TrimSpace(v.AsString()))
		if err != nil {
			return 0, fmt.Sprintf("must be an integer from 1 to %d, not %q", limit, v.AsString())
		}
		n = i
	case cty.Number:
		f := v.AsBigFloat()
		i, acc := f.Int64()
		if !f.IsInt() || acc != 0 {
			return 0, fmt.Sprintf("must be an integer from 1 to %d, not %s", limit, value.FormatNumber(f))
		}
		n = int(i)
	default:
		return 0, fmt.Sprintf("must be an integer from 1 to %d", limit)
	}
	if n < 1 || n > limit {
		return 0, fmt.Sprintf("must be from 1 to %d seconds, not %d", limit, n)
	}
	return n, ""
}

// Diff reports a change when the request the handler would receive differs: for
// CloudFormation any property after stringification (so 3 and "3" are equal), for ROS the
// ServiceToken or Parameters (Timeout alone changes no request). A change may replace the
// resource: the handler decides by answering with a new PhysicalResourceId.
func (p *Provider) Diff(_ context.Context, req provider.DiffRequest) (provider.DiffResponse, error) {
	newProps, _ := req.NewProps.UnmarkDeep()
	oldProps, _ := req.OldProps.UnmarkDeep()
	if newProps == cty.NilVal || !newProps.IsKnown() {
		return provider.DiffResponse{Changed: true, MayReplace: true}, nil
	}
	keys := map[string]bool{}
	for _, k := range append(value.Keys(oldProps), value.Keys(newProps)...) {
		keys[k] = true
	}
	ros := isROS(req.Resource)
	var changed []string
	for k := range keys {
		if ros && k != propToken && k != propParameters {
			continue
		}
		ov, _ := value.Get(oldProps, k)
		nv, _ := value.Get(newProps, k)
		if !sameProperty(ov, nv, !ros) {
			changed = append(changed, k)
		}
	}
	if len(changed) == 0 {
		return provider.DiffResponse{}, nil
	}
	sortStrings(changed)
	return provider.DiffResponse{Changed: true, ChangedKeys: changed, MayReplace: true}, nil
}

// sameProperty compares two property values as the handler would see them; absent and null
// are the same, and a value holding unknowns differs from everything.
func sameProperty(a, b cty.Value, stringify bool) bool {
	if a == cty.NilVal {
		a = cty.NullVal(cty.DynamicPseudoType)
	}
	if b == cty.NilVal {
		b = cty.NullVal(cty.DynamicPseudoType)
	}
	if !a.IsWhollyKnown() || !b.IsWhollyKnown() {
		return false
	}
	if stringify {
		a, b = value.Stringify(a), value.Stringify(b)
	}
	ga, err1 := toJSONish(a)
	gb, err2 := toJSONish(b)
	if err1 != nil || err2 != nil {
		return false
	}
	return reflect.DeepEqual(ga, gb)
}
