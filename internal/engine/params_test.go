package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/providertest"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/value"
)

// remembered declares a parameter with a Default, one without, and a NoEcho one, all handed to
// the one resource.
const remembered = `
AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Size: {Type: Number, Default: "1"}
  Name: {Type: String}
  Pass: {Type: String, NoEcho: true, Default: "default-pass"}
Resources:
  A:
    Type: Test::Thing
    Properties: {Size: !Ref Size, Name: !Ref Name, Pass: !Ref Pass}
`

func withParams(kv ...string) func(*api.DeployRequest) {
	return func(r *api.DeployRequest) {
		r.Parameters = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			r.Parameters[kv[i]] = kv[i+1]
		}
	}
}

// lastProps is what the provider received for A in its last Create or Update, secrets unmarked.
func lastProps(t *testing.T, h *harness) map[string]any {
	t.Helper()
	calls := h.fake.Calls()
	for i := len(calls) - 1; i >= 0; i-- {
		if c := calls[i]; c.Name == "A" && (c.Method == "Create" || c.Method == "Update") {
			props, _ := c.Props.UnmarkDeep()
			g, err := value.ToGo(props)
			if err != nil {
				t.Fatal(err)
			}
			return g.(map[string]any)
		}
	}
	t.Fatalf("no Create or Update of A: %v", h.calls())
	return nil
}

func TestParametersAreRemembered(t *testing.T) {
	type deploy struct {
		tmpl   string
		params []string
	}
	cases := map[string]struct {
		reason string
		then   deploy
		want   map[string]any // what A's provider receives from the second deploy
		params []api.Parameter
	}{
		"NotGivenKeepsPrevious": {
			reason: "A redeploy without a parameter keeps the value it had, a given one included (UsePreviousValue).",
			then:   deploy{remembered, nil},
			want:   map[string]any{"Size": "5", "Name": "n1", "Pass": "s3cret"},
		},
		"GivenWins": {
			reason: "A parameter given again takes its new value; the others are kept.",
			then:   deploy{remembered, []string{"Name", "n2"}},
			want:   map[string]any{"Size": "5", "Name": "n2", "Pass": "s3cret"},
		},
		"EmptyResetsToDefault": {
			reason: "--parameter K= takes the Default again, NoEcho ones included.",
			then:   deploy{remembered, []string{"Size", "", "Pass", ""}},
			want:   map[string]any{"Size": "1", "Name": "n1", "Pass": "default-pass"},
		},
		"EmptyWithoutDefaultIsEmpty": {
			reason: "A parameter without a Default has nothing to reset to: the empty string is its value, as in AWS.",
			then:   deploy{remembered, []string{"Name", ""}},
			want:   map[string]any{"Size": "5", "Name": "", "Pass": "s3cret"},
		},
		"RemovedIsDropped": {
			reason: "A parameter the template no longer declares is dropped, not refused as undeclared.",
			then: deploy{strings.Replace(strings.Replace(remembered, "  Size: {Type: Number, Default: \"1\"}\n", "", 1),
				"Size: !Ref Size, ", "", 1), nil},
			want: map[string]any{"Name": "n1", "Pass": "s3cret"},
		},
		"NewTakesItsDefault": {
			reason: "A parameter the last deploy did not have takes its Default.",
			then: deploy{strings.Replace(strings.Replace(remembered, "Parameters:\n", "Parameters:\n  Zone: {Type: String, Default: z1}\n", 1),
				"Pass: !Ref Pass}", "Pass: !Ref Pass, Zone: !Ref Zone}", 1), nil},
			want: map[string]any{"Size": "5", "Name": "n1", "Pass": "s3cret", "Zone": "z1"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, &providertest.Fake{})
			if op := h.deploy("s", remembered, withParams("Size", "5", "Name", "n1", "Pass", "s3cret")); op.StackStatus != "CREATE_COMPLETE" {
				t.Fatalf("create: %+v", op)
			}
			if op := h.deploy("s", tc.then.tmpl, withParams(tc.then.params...)); op.Status != state.Succeeded {
				t.Fatalf("%s\nredeploy: %+v", tc.reason, op)
			}
			if diff := cmp.Diff(tc.want, lastProps(t, h)); diff != "" {
				t.Errorf("%s\nprovider's properties: -want +got\n%s", tc.reason, diff)
			}
			// The stack shows the values bound, NoEcho masked.
			for _, p := range h.describe("s").Parameters {
				want := tc.want[p.Name]
				if p.NoEcho {
					want = value.Mask
				}
				if p.Value != want {
					t.Errorf("%s\ndescribed parameter %s = %q, want %q", tc.reason, p.Name, p.Value, want)
				}
			}
		})
	}
}

func TestNewRequiredParameterIsRefused(t *testing.T) {
	h := newHarness(t, &providertest.Fake{})
	h.deploy("s", remembered, withParams("Name", "n1"))
	tmpl := strings.Replace(remembered, "Parameters:\n", "Parameters:\n  Zone: {Type: String}\n", 1)
	_, err := h.e.Deploy(context.Background(), "s", api.DeployRequest{Template: tmpl})
	var ve *engine.ValidationError
	if !errors.As(err, &ve) || !strings.Contains(ve.Error(), "parameter Zone has no value") {
		t.Fatalf("a new parameter without a Default nor a value: got %v, want it refused", err)
	}
}

func TestPreviewShowsRememberedParameters(t *testing.T) {
	h := newHarness(t, &providertest.Fake{})
	h.deploy("s", remembered, withParams("Size", "5", "Name", "n1", "Pass", "s3cret"))
	pv, err := h.e.Preview(context.Background(), "s", api.DeployRequest{Template: remembered})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range pv.Changes {
		if c.Action != api.ActionNoop {
			t.Errorf("preview of a redeploy keeping every parameter: want no change, got %+v", pv.Changes)
		}
	}
	want := []api.Parameter{{Name: "Size", Type: "Number", Value: "5"}, {Name: "Name", Type: "String", Value: "n1"},
		{Name: "Pass", Type: "String", NoEcho: true, Value: value.Mask}}
	if diff := cmp.Diff(want, pv.Parameters); diff != "" {
		t.Errorf("preview's parameters: -want +got\n%s", diff)
	}
}

func TestTerraformVariablesAreNotRemembered(t *testing.T) {
	h := newHarness(t, &providertest.Fake{})
	files := map[string]string{"main.tf": `variable "name" {
  type    = string
  default = "d"
}
output "name" { value = var.name }
`}
	h.deploy("tf", "", func(r *api.DeployRequest) { r.Files, r.Parameters = files, map[string]string{"name": "given"} })
	h.deploy("tf", "", func(r *api.DeployRequest) { r.Files = files })
	if got := h.describe("tf").Outputs; len(got) != 1 || got[0].Value != "d" {
		t.Errorf("a Terraform-language redeploy without -var: outputs %+v, want the default (terraform does not remember -var)", got)
	}
}

// TestRolledBackUpdateRemembersWhatWorked: an update that fails and rolls back leaves the
// stack with its previous template and parameters, as CloudFormation does, so the next deploy
// without parameters keeps the values that worked, not the ones that failed.
func TestRolledBackUpdateRemembersWhatWorked(t *testing.T) {
	fake := &providertest.Fake{}
	h := newHarness(t, fake)
	if op := h.deploy("s", remembered, withParams("Size", "5", "Name", "good", "Pass", "s3cret")); op.StackStatus != "CREATE_COMPLETE" {
		t.Fatalf("create: %s %s", op.StackStatus, op.StatusReason)
	}
	fake.UpdateFn = func(_ context.Context, req provider.UpdateRequest) (provider.UpdateResponse, error) {
		if name, _ := req.NewProps.GetAttr("Name").Unmark(); name.AsString() == "bad" {
			return provider.UpdateResponse{}, errors.New("bad name")
		}
		return provider.UpdateResponse{ID: req.ID}, nil
	}
	if op := h.deploy("s", remembered, withParams("Name", "bad")); op.StackStatus != "UPDATE_ROLLBACK_COMPLETE" {
		t.Fatalf("failing update: %s %s", op.StackStatus, op.StatusReason)
	}
	if op := h.deploy("s", remembered); op.Status != state.Succeeded {
		t.Fatalf("redeploy: %s %s", op.StackStatus, op.StatusReason)
	}
	if got := lastProps(t, h)["Name"]; got != "good" {
		t.Errorf("after a rolled-back update the redeploy kept Name = %v, want the value that worked (good)", got)
	}
}
