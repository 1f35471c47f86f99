package customresource

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/value"
)

// TestOutcome covers how a stored response becomes the call's result.
func TestOutcome(t *testing.T) {
	cfn := expectation{StackID: cfnResource.StackID, RequestID: "req-1", LogicalID: "Thing"}
	ros := expectation{StackID: rosResource.StackID, RequestID: "req-1", LogicalID: "Thing", IntranetResponseURL: "https://x"}
	body := func(set map[string]any) []byte {
		return []byte(respBody(cfnResource, "req-1", set))
	}
	rosBody := func(set map[string]any) []byte { return []byte(respBody(rosResource, "req-1", set)) }
	cases := map[string]struct {
		reason  string
		e       expectation
		body    []byte
		id      string
		outputs cty.Value
		diags   diag.Diagnostics
	}{
		"Success": {
			reason: "Data becomes the outputs, JSON types kept.",
			e:      cfn, body: body(map[string]any{"Data": map[string]any{"S": "x", "N": 7, "L": []any{true}}}),
			id: "phys-1", outputs: obj(map[string]cty.Value{"S": cty.StringVal("x"), "N": cty.NumberIntVal(7), "L": cty.TupleVal([]cty.Value{cty.True})}),
		},
		"NoData": {
			reason: "No Data is an empty object.",
			e:      cfn, body: body(map[string]any{"Data": nil}), id: "phys-1", outputs: cty.EmptyObjectVal,
		},
		"NoEcho": {
			reason: "NoEcho marks every Data value secret.",
			e:      cfn, body: body(map[string]any{"NoEcho": true, "Data": map[string]any{"Password": "pw", "User": "u"}}),
			id: "phys-1", outputs: obj(map[string]cty.Value{"Password": value.Secret(cty.StringVal("pw")), "User": value.Secret(cty.StringVal("u"))}),
		},
		"ROSOutputs": {
			reason: "ROS also exposes the whole Data map as Outputs.",
			e:      ros, body: rosBody(map[string]any{"Data": map[string]any{"A": "1"}}),
			id: "phys-1", outputs: obj(map[string]cty.Value{"A": cty.StringVal("1"), "Outputs": obj(map[string]cty.Value{"A": cty.StringVal("1")})}),
		},
		"ROSNoData": {
			reason: "ROS Outputs is an empty map without Data.",
			e:      ros, body: rosBody(map[string]any{"Data": nil}),
			id: "phys-1", outputs: obj(map[string]cty.Value{"Outputs": cty.EmptyObjectVal}),
		},
		"Failed": {
			reason: "FAILED: the Reason is the summary and the physical id is kept for rollback.",
			e:      cfn, body: body(map[string]any{"Status": "FAILED", "Reason": "bucket exists", "PhysicalResourceId": "half"}),
			id: "half", diags: diag.Diagnostics{{Severity: diag.Error, Summary: "bucket exists", Detail: "Create request req-1 failed (PhysicalResourceId half)"}},
		},
		"FailedWithoutReason": {
			reason: "FAILED without a Reason still says something.",
			e:      cfn, body: body(map[string]any{"Status": "FAILED", "PhysicalResourceId": nil}),
			diags: diag.Diagnostics{{Severity: diag.Error, Summary: "The custom resource handler answered FAILED without a Reason", Detail: "Create request req-1 failed"}},
		},
		"InvalidStored": {
			reason: "A stored body that breaks the rules (from an older version) fails the call with the rule.",
			e:      cfn, body: body(map[string]any{"PhysicalResourceId": nil}),
			diags: diag.Diagnostics{{Severity: diag.Error, Summary: "Invalid PhysicalResourceId", Detail: "a SUCCESS response must carry a non-empty PhysicalResourceId"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := outcomeOf(tc.e, reqCreate, tc.body)
			if o.id != tc.id {
				t.Errorf("%s\nid: got %q, want %q", tc.reason, o.id, tc.id)
			}
			if (tc.outputs == cty.NilVal) != (o.outputs == cty.NilVal) || tc.outputs != cty.NilVal && !tc.outputs.RawEquals(o.outputs) {
				t.Errorf("%s\noutputs:\ngot  %#v\nwant %#v", tc.reason, o.outputs, tc.outputs)
			}
			if diff := cmp.Diff(tc.diags, o.diags); diff != "" {
				t.Errorf("%s\ndiagnostics: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
