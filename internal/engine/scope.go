package engine

import (
	"context"
	"fmt"
	"sync"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// scope is what expressions see of the stack's resources during a run or a preview: values of
// resources applied so far (or unchanged), unknown for the rest.
type scope struct {
	ctx  context.Context // of the request or run evaluating (template.Scope)
	tmpl *template.Stack
	mu   sync.RWMutex
	vals map[string]template.ResourceValue
	// rows are stored rows not decoded yet: a run starts with every resource's row, and most
	// are never referenced by what changes.
	rows map[string]state.Resource
	// planning: the scope of a preview, where impure functions (timestamp, uuid) are unknown.
	planning bool
	// eph opens the ephemeral resources of the Terraform language (ephemeral.go); nil: none.
	eph *ephemerals
}

// Planning implements tflang.Planner.
func (s *scope) Planning() bool { return s.planning }

func newScope(ctx context.Context, tmpl *template.Stack) *scope {
	return &scope{ctx: ctx, tmpl: tmpl, vals: map[string]template.ResourceValue{}, rows: map[string]state.Resource{}}
}

// Context implements template.Scope.
func (s *scope) Context() context.Context { return s.ctx }

// Resource implements template.Scope.
func (s *scope) Resource(name string) (template.ResourceValue, bool) {
	if s.tmpl == nil || s.tmpl.Resource(name) == nil {
		return template.ResourceValue{}, false
	}
	s.mu.RLock()
	v, ok := s.vals[name]
	s.mu.RUnlock()
	if ok {
		return v, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.vals[name]; ok {
		return v, true
	}
	row, ok := s.rows[name]
	if !ok {
		return template.UnknownResource, true
	}
	v, err := rowValue(row)
	if err != nil { // its envelope was checked by setRow; a value inside that cannot be decoded reads as unknown
		return template.UnknownResource, true
	}
	s.vals[name] = v
	delete(s.rows, name)
	return v, true
}

func (s *scope) set(name string, v template.ResourceValue) {
	s.mu.Lock()
	s.vals[name] = v
	delete(s.rows, name)
	s.mu.Unlock()
}

// setRow makes a stored resource row the value of its resource. The row is decoded when an
// expression first reads it; one that is not a stored value is refused now.
func (s *scope) setRow(row state.Resource) error {
	if err := value.CheckStored(row.Outputs); err != nil {
		return fmt.Errorf("cannot decode the state of %s: %w", row.Name, err)
	}
	s.mu.Lock()
	delete(s.vals, row.Name)
	s.rows[row.Name] = row
	s.mu.Unlock()
	return nil
}

func rowValue(row state.Resource) (template.ResourceValue, error) {
	outs, err := value.Unmarshal(row.Outputs)
	if err != nil {
		return template.ResourceValue{}, err
	}
	if outs.IsNull() {
		outs = cty.EmptyObjectVal
	}
	return template.ResourceValue{ID: cty.StringVal(row.ID), Outputs: outs}, nil
}
