package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Format is the version of a Plan's JSON; a plan of another format is refused.
const Format = 1

// Plan is every step a deploy of a stack would take, what it was made from, and what would
// happen to the stack's outputs. Resources that stay as they are have no step, which keeps a
// plan of a large stack small: Holds requires them to stay so.
type Plan struct {
	Format  int            `json:"format"`
	Stack   string         `json:"stack"`
	Base    Base           `json:"base"`
	Steps   []Step         `json:"steps"`
	Outputs []OutputChange `json:"outputs,omitempty"`

	once  sync.Once
	index map[string]int // Steps by resource, for Step
}

// Base is what a plan was made from, as digests: a saved plan applies only to the same.
type Base struct {
	Template  string            `json:"template"`            // the template, its files and the bound parameters
	Stack     string            `json:"stack"`               // the stack's own state (status, outputs)
	Resources map[string]string `json:"resources,omitempty"` // each stored resource's state
}

// OutputChange is what happens to one stack output. Before and After are masked for display.
type OutputChange struct {
	Name   string `json:"name"`
	Action Action `json:"action"` // Create, Update, Delete or Same
	Before any    `json:"before,omitempty"`
	After  any    `json:"after,omitempty"`
}

// Digest is a short, stable digest of parts, for Base.
func Digest(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:", len(p))
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Step returns the step for resource name, if the plan has one. The index is built on the
// first call: a Plan's Steps do not change once it is made or decoded.
func (p *Plan) Step(name string) (Step, bool) {
	p.once.Do(func() {
		p.index = make(map[string]int, len(p.Steps))
		for i, s := range p.Steps {
			p.index[s.Resource] = i
		}
	})
	i, ok := p.index[name]
	if !ok {
		return Step{}, false
	}
	return p.Steps[i], true
}

// Decode reads a saved plan.
func Decode(b []byte) (*Plan, error) {
	var p Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("not a cairn plan: %w", err)
	}
	if p.Format != Format {
		return nil, fmt.Errorf("a cairn plan of format %d, which this cairn does not read (it reads format %d): preview again", p.Format, Format)
	}
	return &p, nil
}

// StaleError says why a saved plan no longer applies.
type StaleError struct {
	Stack string
	Moved []string // each thing that changed since the plan, in words
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("the saved plan for stack %s no longer applies: %s. Preview again and apply the new plan",
		e.Stack, strings.Join(e.Moved, "; "))
}

// Stale compares a saved plan with one made now from the same request: nil when they agree,
// else a *StaleError naming what moved.
func (p *Plan) Stale(now *Plan) error {
	var moved []string
	if p.Stack != now.Stack {
		moved = append(moved, fmt.Sprintf("it was made for stack %s", p.Stack))
	}
	if p.Base.Template != now.Base.Template {
		moved = append(moved, "the template or its parameters changed")
	}
	if p.Base.Stack != now.Base.Stack {
		moved = append(moved, "the stack's state changed (another operation ran)")
	}
	var se *StaleError
	if errors.As(p.MovedResources(now.Base.Resources), &se) {
		moved = append(moved, se.Moved...)
	}
	if len(moved) == 0 {
		// Same inputs, different answers: a provider decides otherwise now.
		for _, s := range p.Steps {
			n, ok := now.Step(s.Resource)
			if !ok || !sameStep(s, n) || !slices.Equal(s.DestroyFirst, n.DestroyFirst) {
				moved = append(moved, fmt.Sprintf("%s was planned to %s and would now %s", s.Resource, describe(s), describe(n)))
			}
		}
		for _, n := range now.Steps {
			if _, ok := p.Step(n.Resource); !ok {
				moved = append(moved, fmt.Sprintf("%s was not in the plan and would now %s", n.Resource, describe(n)))
			}
		}
	}
	if len(moved) == 0 {
		return nil
	}
	return &StaleError{Stack: p.Stack, Moved: moved}
}

// Holds returns an error when step now, decided for resource name with the values known at
// apply time, is not what the plan allows (see Allows). A resource a delete-first replacement
// upstream destroyed ahead of its step is created at that step: the second half of its own
// planned replacement, as the caller says with gone.
func (p *Plan) Holds(name string, now Step, gone bool) error {
	if gone && now.Action == Create {
		now = Step{Action: Replace, Order: DeleteFirst}
	}
	planned, ok := p.Step(name)
	switch {
	case !ok && now.Action == Same:
		return nil
	case !ok:
		return fmt.Errorf("the saved plan does not change %s, which would now %s: preview again", name, describe(now))
	case !Allows(planned, now):
		return fmt.Errorf("the saved plan said %s would %s; it would now %s: preview again", name, describe(planned), describe(now))
	}
	return nil
}

// HoldsCascade returns an error when the resources a delete-first replacement of name would
// destroy first are not the ones the plan listed.
func (p *Plan) HoldsCascade(name string, doomed []string) error {
	s, _ := p.Step(name)
	if slices.Equal(s.DestroyFirst, doomed) {
		return nil
	}
	return fmt.Errorf("the saved plan said replacing %s would destroy %v first; it would now destroy %v: preview again", name, s.DestroyFirst, doomed)
}

// MovedResources compares the stored resources a plan was made from with those now (digests
// by name, as Base.Resources): nil when they agree, else a *StaleError naming each one.
func (p *Plan) MovedResources(now map[string]string) error {
	var moved []string
	for _, name := range unionKeys(p.Base.Resources, now) {
		was, had := p.Base.Resources[name]
		is, has := now[name]
		switch {
		case !had:
			moved = append(moved, fmt.Sprintf("resource %s was added to the stack", name))
		case !has:
			moved = append(moved, fmt.Sprintf("resource %s was removed from the stack", name))
		case was != is:
			moved = append(moved, fmt.Sprintf("resource %s changed", name))
		}
	}
	if len(moved) == 0 {
		return nil
	}
	return &StaleError{Stack: p.Stack, Moved: moved}
}

// Allows reports whether a deploy holding the saved step planned may take step now, decided
// with the values known at apply time: the same step, or less (an update whose unknown values
// turned out unchanged).
func Allows(planned, now Step) bool {
	if planned.Action == Import && now.Action == Same { // the deploy imported it at its step
		return true
	}
	planned.Importing, now.Importing = "", "" // by the time a step is decided, its import is done
	if sameStep(planned, now) {
		return true
	}
	if now.Action != Same {
		return planned.Action == Update && now.Action == Update && (planned.Replacement == "Conditional" || now.Replacement == "")
	}
	return planned.Action == Update
}

func sameStep(a, b Step) bool {
	return a.Action == b.Action && a.Order == b.Order && a.Replacement == b.Replacement && a.Importing == b.Importing
}

// describe names a step's action in words.
func describe(s Step) string {
	switch {
	case s.Action == "":
		return "not be in the plan"
	case s.Action == Replace:
		return fmt.Sprintf("be replaced (%s)", s.Order)
	case s.Action == Same:
		return "stay as it is"
	case s.Replacement != "":
		return fmt.Sprintf("%s (replacement: %s)", s.Action, s.Replacement)
	}
	return string(s.Action)
}

func unionKeys(a, b map[string]string) []string {
	keys := slices.AppendSeq(slices.Collect(maps.Keys(a)), maps.Keys(b))
	slices.Sort(keys)
	return slices.Compact(keys)
}
