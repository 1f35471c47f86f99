package plan

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestDecide(t *testing.T) {
	changed := &Answer{Changed: true}
	replace := &Answer{Changed: true, Replace: true}
	maybe := &Answer{Changed: true, MayReplace: true}
	tests := []struct {
		name string
		f    Facts
		want Step
	}{
		{"a data source is read", Facts{Data: true}, Step{Action: Read}},
		{"nothing stored: create", Facts{}, Step{Action: Create}},
		{"tainted: replace, delete first", Facts{Exists: true, Tainted: true, PlansReplacements: true}, Step{Action: Replace, Order: DeleteFirst}},
		{"tainted with create_before_destroy", Facts{Exists: true, Tainted: true, PlansReplacements: true, CreateBeforeDestroy: true},
			Step{Action: Replace, Order: CreateFirst}},
		{"unchanged needs no diff", Facts{Exists: true, Unchanged: true}, Step{Action: Same}},
		{"no difference", Facts{Exists: true, Diff: &Answer{}}, Step{Action: Same}},
		{"a failed update is made again", Facts{Exists: true, Failed: true, Diff: &Answer{}}, Step{Action: Update}},
		{"a failed update is made again even when unchanged", Facts{Exists: true, Failed: true, Unchanged: true, Diff: &Answer{}}, Step{Action: Update}},
		{"a change", Facts{Exists: true, Diff: changed}, Step{Action: Update}},
		{"the engine replaces", Facts{Exists: true, Diff: replace, PlansReplacements: true}, Step{Action: Replace, Order: DeleteFirst}},
		{"the provider replaces during its update", Facts{Exists: true, Diff: replace}, Step{Action: Update, Replacement: "True"}},
		{"the provider asks delete-first where the template left the order to it",
			Facts{Exists: true, PlansReplacements: true, CreateBeforeDestroy: true, ProviderOrdersReplace: true,
				Diff: &Answer{Changed: true, Replace: true, DeleteBeforeReplace: true}},
			Step{Action: Replace, Order: DeleteFirst}},
		{"the template's own order wins over the provider's delete-first",
			Facts{Exists: true, PlansReplacements: true, CreateBeforeDestroy: true,
				Diff: &Answer{Changed: true, Replace: true, DeleteBeforeReplace: true}},
			Step{Action: Replace, Order: CreateFirst}},
		{"the provider may replace", Facts{Exists: true, Diff: maybe}, Step{Action: Update, Replacement: "Conditional"}},
		{"replace_triggered_by", Facts{Exists: true, Diff: &Answer{}, Triggered: true, PlansReplacements: true}, Step{Action: Replace, Order: DeleteFirst}},
		{"replace_triggered_by beats unchanged", Facts{Exists: true, Unchanged: true, Triggered: true, Diff: &Answer{}, PlansReplacements: true},
			Step{Action: Replace, Order: DeleteFirst}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decide(tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if !sameStep(got, tt.want) {
				t.Errorf("Decide = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDecideRefuses(t *testing.T) {
	_, err := Decide(Facts{Name: "a.b", Exists: true, Diff: &Answer{Changed: true, Replace: true}, PlansReplacements: true, PreventDestroy: true})
	var pd *PreventDestroyError
	if !errors.As(err, &pd) || !strings.Contains(err.Error(), "resource a.b has lifecycle.prevent_destroy set") {
		t.Errorf("prevent_destroy: err = %v", err)
	}
	if _, err := Decide(Facts{Name: "x", Exists: true}); err == nil {
		t.Error("an existing resource without a diff: no error")
	}
}

// a <- b <- c, a <- d: replacing a delete-first takes b and c with it when they are replaced
// delete-first too, and destroys c before b.
func TestCascade(t *testing.T) {
	deps := map[string][]string{"b": {"a"}, "c": {"b"}, "d": {"a"}}
	order := []string{"a", "b", "d", "c"}
	got := Cascade(order, func(n string) []string { return deps[n] }, "a", func(n string, replaced map[string]bool) bool {
		return n != "d"
	})
	if want := []string{"c", "b"}; !slices.Equal(got, want) {
		t.Errorf("Cascade = %v, want %v", got, want)
	}
	// A dependent that is not replaced stops the cascade below it.
	got = Cascade(order, func(n string) []string { return deps[n] }, "a", func(n string, _ map[string]bool) bool { return n == "c" })
	if len(got) != 0 {
		t.Errorf("Cascade through an updated b = %v, want none", got)
	}
}

func TestOrder(t *testing.T) {
	deps := map[string][]string{"b": {"a"}, "c": {"b"}}
	p := &Plan{Steps: []Step{
		{Resource: "a", Action: Replace, Order: DeleteFirst},
		{Resource: "b", Action: Replace, Order: DeleteFirst},
		{Resource: "c", Action: Replace, Order: CreateFirst},
	}}
	p.Order([]string{"a", "b", "c"}, func(n string) []string { return deps[n] })
	if want := []string{"b"}; !slices.Equal(p.Steps[0].DestroyFirst, want) {
		t.Errorf("a destroys first %v, want %v", p.Steps[0].DestroyFirst, want)
	}
	if len(p.Steps[1].DestroyFirst) != 0 || len(p.Steps[2].DestroyFirst) != 0 {
		t.Errorf("b, c destroy first %v, %v; want none", p.Steps[1].DestroyFirst, p.Steps[2].DestroyFirst)
	}
}

func TestStale(t *testing.T) {
	base := Base{Template: "t1", Stack: "s1", Resources: map[string]string{"a": "1", "b": "2"}}
	saved := &Plan{Format: Format, Stack: "demo", Base: base, Steps: []Step{{Resource: "a", Action: Update}}}
	same := &Plan{Format: Format, Stack: "demo", Base: base, Steps: []Step{{Resource: "a", Action: Update}}}
	if err := saved.Stale(same); err != nil {
		t.Fatalf("the same plan is stale: %v", err)
	}
	moved := &Plan{Format: Format, Stack: "demo", Base: Base{Template: "t1", Stack: "s2", Resources: map[string]string{"a": "1", "b": "3", "c": "4"}}}
	err := saved.Stale(moved)
	var se *StaleError
	if !errors.As(err, &se) {
		t.Fatalf("Stale = %v, want a *StaleError", err)
	}
	for _, want := range []string{"the stack's state changed", "resource b changed", "resource c was added"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Stale = %q, want it to say %q", err, want)
		}
	}
	answered := &Plan{Format: Format, Stack: "demo", Base: base, Steps: []Step{{Resource: "a", Action: Replace, Order: DeleteFirst}}}
	if err := saved.Stale(answered); err == nil || !strings.Contains(err.Error(), "a was planned to update and would now be replaced (delete-first)") {
		t.Errorf("Stale with another answer = %v", err)
	}
	if err := saved.Stale(&Plan{Format: Format, Stack: "demo", Base: Base{Template: "t2", Stack: "s1", Resources: base.Resources}}); err == nil ||
		!strings.Contains(err.Error(), "the template or its parameters changed") {
		t.Errorf("Stale with another template = %v", err)
	}
}

func TestHolds(t *testing.T) {
	p := &Plan{Steps: []Step{
		{Resource: "u", Action: Update},
		{Resource: "r", Action: Replace, Order: DeleteFirst, DestroyFirst: []string{"x"}},
		{Resource: "i", Action: Import, Importing: "id-1"},
		{Resource: "m", Action: Update, Replacement: "Conditional"},
	}}
	ok := []struct {
		name string
		now  Step
	}{
		{"u", Step{Action: Update}},
		{"u", Step{Action: Same}}, // unknowns that turned out unchanged
		{"r", Step{Action: Replace, Order: DeleteFirst}},
		{"i", Step{Action: Same}},
		{"m", Step{Action: Update, Replacement: "True"}},
		{"absent", Step{Action: Same}},
	}
	for _, c := range ok {
		if err := p.Holds(c.name, c.now, false); err != nil {
			t.Errorf("Holds(%s, %+v) = %v", c.name, c.now, err)
		}
	}
	refused := []struct {
		name string
		now  Step
	}{
		{"u", Step{Action: Replace, Order: DeleteFirst}},
		{"u", Step{Action: Update, Replacement: "True"}},
		{"r", Step{Action: Update}},
		{"absent", Step{Action: Create}},
	}
	for _, c := range refused {
		if err := p.Holds(c.name, c.now, false); err == nil || !strings.Contains(err.Error(), "preview again") {
			t.Errorf("Holds(%s, %+v) = %v, want a refusal", c.name, c.now, err)
		}
	}
}

func TestDecode(t *testing.T) {
	if _, err := Decode([]byte(`{"format": 99}`)); err == nil || !strings.Contains(err.Error(), "format 99") {
		t.Errorf("Decode of another format = %v", err)
	}
	if _, err := Decode([]byte(`nonsense`)); err == nil || !strings.Contains(err.Error(), "not a cairn plan") {
		t.Errorf("Decode of nonsense = %v", err)
	}
}
