package tflang

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cairn-dev/cairn/internal/diag"
)

// TestTerraformBlock: required_version is checked against the language version cairn
// implements, with terraform's message at the constraint; backend and cloud blocks are
// warnings (cairn keeps the state), and their arguments are not read as required providers.
func TestTerraformBlock(t *testing.T) {
	cases := map[string]struct {
		reason string
		src    string
		want   []diag.Diagnostic
	}{
		"OldCore": {
			reason: "A configuration for terraform before 1.0.",
			src:    "terraform {\n  required_version = \"< 1.0.0\"\n}\n",
			want:   []diag.Diagnostic{{Summary: "Unsupported Terraform Core version", Range: rng("main.tf", 2, 22)}},
		},
		"BadConstraint": {
			reason: "A constraint that is not one.",
			src:    "terraform {\n  required_version = \"~> banana\"\n}\n",
			want:   []diag.Diagnostic{{Summary: "Invalid required_version constraint", Range: rng("main.tf", 2, 22)}},
		},
		"Admitted": {
			reason: "Constraints that admit 1.11.4 pass.",
			src:    "terraform {\n  required_version = \">= 1.3, < 2.0\"\n}\n",
		},
		"Backend": {
			reason: "A backend block warns and its arguments are not provider requirements.",
			src:    "terraform {\n  backend \"s3\" {\n    bucket = \"x\"\n  }\n}\n",
			want:   []diag.Diagnostic{{Severity: diag.Warning, Summary: "Backend configuration ignored", Range: rng("main.tf", 2, 3)}},
		},
		"Cloud": {
			reason: "A cloud block warns too.",
			src:    "terraform {\n  cloud {\n    organization = \"x\"\n  }\n}\n",
			want:   []diag.Diagnostic{{Severity: diag.Warning, Summary: "Backend configuration ignored", Range: rng("main.tf", 2, 3)}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st, ds := Parse(context.Background(), files("main.tf", tc.src+"output \"a\" { value = 1 }\n"), Options{})
			if ds.HasErrors() != (st == nil) {
				t.Errorf("%s\nstack %v with diagnostics %v", tc.reason, st != nil, ds)
			}
			if st != nil && len(st.Requirements) != 0 {
				t.Errorf("%s\nrequirements %+v, want none", tc.reason, st.Requirements[0])
			}
			if diff := cmp.Diff(tc.want, []diag.Diagnostic(ds), cmpopts.EquateEmpty(), cmpopts.IgnoreFields(diag.Diagnostic{}, "Detail")); diff != "" {
				t.Errorf("%s\ndiagnostics: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestRequiredVersionLikeTerraform: terraform 1.11 refuses the same constraint with the same
// summary at the same line (skipped where the terraform CLI is absent).
func TestRequiredVersionLikeTerraform(t *testing.T) {
	bin, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("terraform CLI not found on PATH")
	}
	dir := t.TempDir()
	src := "terraform {\n  required_version = \"< 1.0.0\"\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "validate", "-no-color")
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), "TF_CLI_CONFIG_FILE=/dev/null", "CHECKPOINT_DISABLE=1")
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "Unsupported Terraform Core version") || !strings.Contains(string(out), "line 2") {
		t.Fatalf("terraform validate:\n%s", out)
	}
	_, ds := Parse(context.Background(), files("main.tf", src), Options{})
	if len(ds) != 1 || ds[0].Summary != "Unsupported Terraform Core version" || ds[0].Range.Line != 2 {
		t.Errorf("cairn: %v", ds)
	}
}
