package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/atomicfile"
)

// planFile is what `cairn preview --out` saves: the request the preview was made from (the
// template, its files and parameters) and the server's plan, so that `cairn deploy --plan`
// applies exactly that, as terraform apply applies a saved plan without reading the
// configuration again. Parameters are kept in clear, as in terraform's plan files: the file
// is written readable by its owner only.
type planFile struct {
	Kind    string            `json:"kind"` // planFileKind
	Stack   string            `json:"stack"`
	Request api.DeployRequest `json:"request"`
	Plan    json.RawMessage   `json:"plan"`
	// Ephemeral names the ephemeral variables, whose values are not saved: the deploy of the
	// plan takes them again (--var, TF_VAR_*), as terraform apply PLANFILE does.
	Ephemeral []string `json:"ephemeral,omitempty"`
}

const planFileKind = "cairn-plan"

func writePlanFile(path, stack string, p api.PreviewResponse) error {
	if p.Saved == nil {
		return fmt.Errorf("the server did not say what of the request a plan file may keep: is it older than this cairn?")
	}
	b, err := json.Marshal(planFile{Kind: planFileKind, Stack: stack, Request: *p.Saved, Plan: p.Plan, Ephemeral: p.EphemeralVars})
	if err != nil {
		return fmt.Errorf("cannot encode the plan: %w", err)
	}
	// Whole or not at all, and never readable by others, even for a moment: it holds the
	// parameters.
	if err := atomicfile.Write(path, b, 0o600); err != nil {
		return fmt.Errorf("cannot save the plan: %w", err)
	}
	return nil
}

func readPlanFile(path string) (planFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return planFile{}, fmt.Errorf("cannot read the plan: %w", err)
	}
	var pf planFile
	if err := json.Unmarshal(b, &pf); err != nil || pf.Kind != planFileKind || len(pf.Plan) == 0 {
		return planFile{}, usagef("%s is not a plan saved by cairn preview --out", path)
	}
	return pf, nil
}

// hasChanges reports whether a preview would change anything.
func hasChanges(p api.PreviewResponse) bool {
	for _, c := range p.Changes {
		if c.Action != api.ActionNoop && c.Action != "" || c.MovedFrom != "" || c.Importing != "" {
			return true
		}
	}
	return len(p.Outputs) > 0
}

// interactive reports whether the command may ask a question: both stdin and stdout are a
// terminal and the output is for people. A CI job, a pipe or --output json never asks.
func (r *runner) interactive() bool {
	return r.output != "json" && r.env.IsTerminal(r.env.Stdin) && r.env.IsTerminal(r.env.Stdout)
}

// confirm asks question and reports whether the answer was "yes", as terraform asks before
// it applies or destroys.
func (r *runner) confirm(question, detail string) bool {
	fmt.Fprintf(r.env.Stdout, "\n%s\n  %s\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: ", question, detail)
	yes, err := answeredYes(r.env.Stdin)
	if err != nil {
		return false
	}
	fmt.Fprintln(r.env.Stdout)
	return yes
}

// answeredYes reads one line of in and reports whether it is "yes", the only answer that
// approves (as terraform's prompts take it).
func answeredYes(in io.Reader) (bool, error) {
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("cannot read the answer: %w", err)
	}
	return strings.TrimSpace(line) == "yes", nil
}
