package engine

import (
	"sync"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// scope is what expressions see of the stack's resources during a run or a preview: values of
// resources applied so far (or unchanged), unknown for the rest.
type scope struct {
	tmpl *template.Stack
	mu   sync.RWMutex
	vals map[string]template.ResourceValue
}

func newScope(tmpl *template.Stack) *scope {
	return &scope{tmpl: tmpl, vals: map[string]template.ResourceValue{}}
}

// Resource implements template.Scope.
func (s *scope) Resource(name string) (template.ResourceValue, bool) {
	if s.tmpl == nil || s.tmpl.Resource(name) == nil {
		return template.ResourceValue{}, false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if v, ok := s.vals[name]; ok {
		return v, true
	}
	return template.UnknownResource, true
}

func (s *scope) set(name string, v template.ResourceValue) {
	s.mu.Lock()
	s.vals[name] = v
	s.mu.Unlock()
}

// setRow makes a stored resource row the value of its resource.
func (s *scope) setRow(row state.Resource) error {
	outs, err := value.Unmarshal(row.Outputs)
	if err != nil {
		return err
	}
	if outs.IsNull() {
		outs = cty.EmptyObjectVal
	}
	s.set(row.Name, template.ResourceValue{ID: cty.StringVal(row.ID), Outputs: outs})
	return nil
}
