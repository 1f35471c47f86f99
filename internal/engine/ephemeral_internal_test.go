package engine

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/template"
)

// TestStoredRequestLeavesEphemeralValuesOut: the request cairn stores (to resume the run and
// to delete the stack) holds no ephemeral variable's value, wherever it was given; the other
// variables are kept as given.
func TestStoredRequestLeavesEphemeralValuesOut(t *testing.T) {
	const secret = "s3cr3t-value"
	req := api.DeployRequest{
		Parameters: map[string]string{"pw": secret, "name": "keep"},
		Env:        map[string]string{"pw": secret, "other": "keep"},
		VarFiles:   []string{"x.tfvars"},
		Files: map[string]string{
			"main.tf":               `variable "pw" { ephemeral = true }`,
			"x.tfvars":              "pw = \"" + secret + "\"\nname = \"keep\"\n",
			"terraform.tfvars.json": `{"pw": "` + secret + `", "name": "keep"}`,
		},
	}
	st := &template.Stack{Parameters: []*template.Parameter{{Name: "pw", Ephemeral: true}, {Name: "name"}}}
	got, names := storedRequest(req, st)
	if len(names) != 1 || names[0] != "pw" {
		t.Fatalf("names = %v", names)
	}
	all := strings.Join([]string{got.Files["x.tfvars"], got.Files["terraform.tfvars.json"], got.Parameters["pw"], got.Env["pw"]}, "|")
	if strings.Contains(all, secret) {
		t.Fatalf("stored request keeps the ephemeral value: %s", all)
	}
	if got.Parameters["name"] != "keep" || got.Env["other"] != "keep" || !strings.Contains(got.Files["x.tfvars"], `name = "keep"`) ||
		!strings.Contains(got.Files["terraform.tfvars.json"], `"name":"keep"`) || got.Files["main.tf"] != req.Files["main.tf"] {
		t.Fatalf("stored request lost other values: %+v", got)
	}
	if req.Parameters["pw"] != secret || !strings.Contains(req.Files["x.tfvars"], secret) {
		t.Fatal("the caller's request was changed")
	}
	r := &run{req: opRequest{EphemeralVars: names}}
	if msg := r.ephemeralGone(); !strings.Contains(msg, "cannot resume") || !strings.Contains(msg, "pw") {
		t.Fatalf("resumed run: %q", msg)
	}
	r.handedOff = true
	if msg := r.ephemeralGone(); msg != "" {
		t.Fatalf("first run: %q", msg)
	}
}
