package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
)

// refactoring is what a configuration's moved and removed blocks do to a stack's rows before
// planning: rows renamed (new name -> old name) and rows forgotten (removed with destroy =
// false: they leave the stack, their objects stay).
type refactoring struct {
	moved     map[string]string
	forgotten []state.Resource
	blocked   []blockedMove // moves not made: something is at their target already
}

// blockedMove is a row a moved block would move to an address the stack already holds:
// terraform leaves both, warns, and plans to destroy the one not moved.
type blockedMove struct{ from, to string }

// refactor applies st's moved blocks to rows, in place, as terraform does before it plans:
// each statement moves what is at its From (a resource's instances, one instance, or a module's
// resources) to its To unless something is there already; chains (a to b, b to c) end at their
// last address whatever the order of the blocks. Then removed blocks with destroy = false
// forget what the configuration no longer declares at their From.
func refactor(st *template.Stack, rows map[string]state.Resource) refactoring {
	out := refactoring{moved: map[string]string{}}
	if st == nil {
		return out
	}
	for pass := 0; pass <= len(st.Moves); pass++ {
		changed := false
		for _, mv := range st.Moves {
			for _, name := range sortedKeys(rows) {
				to, ok := movedName(mv, name)
				if !ok {
					continue
				}
				if _, taken := rows[to]; taken {
					continue // terraform leaves both and warns; the object at To stays what it is
				}
				row := rows[name]
				delete(rows, name)
				row.Name = to
				rows[to] = row
				orig := name
				if o, ok := out.moved[name]; ok {
					orig = o
					delete(out.moved, name)
				}
				out.moved[to] = orig
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	for _, name := range sortedKeys(rows) { // what is still where a move starts
		for _, mv := range st.Moves {
			if to, ok := movedName(mv, name); ok && to != name {
				if _, taken := rows[to]; taken {
					out.blocked = append(out.blocked, blockedMove{name, to})
					break
				}
			}
		}
	}
	for _, rm := range st.Removals {
		if rm.Destroy {
			continue
		}
		for _, name := range sortedKeys(rows) {
			if st.Resource(name) == nil && under(name, rm.From) {
				out.forgotten = append(out.forgotten, rows[name])
				delete(rows, name)
			}
		}
	}
	sort.Slice(out.forgotten, func(i, j int) bool { return out.forgotten[i].Name < out.forgotten[j].Name })
	return out
}

// movedName is the address a move statement gives the row called name, if it applies.
func movedName(mv *template.Move, name string) (string, bool) {
	if name == mv.From {
		return mv.To, true
	}
	if rest, ok := strings.CutPrefix(name, mv.From); ok {
		switch {
		case strings.HasPrefix(rest, "."): // a module's resources
			return mv.To + rest, true
		case strings.HasPrefix(rest, "[") && !strings.HasSuffix(mv.From, "]"): // a resource's or module's instances
			return mv.To + rest, true
		}
	}
	return "", false
}

// blockedWarning is terraform's warning about moves whose target was taken; nil when none was.
func blockedWarning(blocked []blockedMove) diag.Diagnostics {
	if len(blocked) == 0 {
		return nil
	}
	var items strings.Builder
	for _, b := range blocked {
		fmt.Fprintf(&items, "\n  - %s could not move to %s", b.from, b.to)
	}
	return diag.Diagnostics{{Severity: diag.Warning, Summary: "Unresolved resource instance address changes",
		Detail: "Terraform tried to adjust resource instance addresses in the prior state based on change information recorded " +
			"in the configuration, but some adjustments did not succeed due to existing objects already at the intended addresses:" +
			items.String() + "\n\nTerraform has planned to destroy these objects. If Terraform's proposed changes aren't appropriate, " +
			"you must first resolve the conflicts using the \"terraform state\" subcommands and then create a new plan."}}
}

// under reports whether the row called name belongs to the resource or module call from.
func under(name, from string) bool {
	rest, ok := strings.CutPrefix(name, from)
	return ok && (rest == "" || rest[0] == '[' || rest[0] == '.')
}

// applyRefactoring journals a run's moves and forgets, so that the rows have their new names
// before anything is planned; a run resumed after a restart finds them done.
func (r *run) applyRefactoring(ctx context.Context) error {
	if r.tmpl == nil || (len(r.tmpl.Moves) == 0 && len(r.tmpl.Removals) == 0) {
		return nil
	}
	rf := refactor(r.tmpl, r.prior)
	for _, to := range sortedKeys(rf.moved) {
		from, row := rf.moved[to], r.prior[to]
		key := "move/" + to
		token, _, err := r.begin(ctx, key)
		if err != nil {
			return err
		}
		if err := r.end(ctx, key, token, false, detail{Kind: "move", After: imageOf(row)}, state.Write{Delete: from}, state.Write{Put: &row}); err != nil {
			return err
		}
		if err := r.event(ctx, to, row.ID, row.Type, "MOVE_COMPLETE", "Moved from "+from); err != nil {
			return err
		}
	}
	for _, b := range rf.blocked { // the row stays where it is, and is destroyed if the configuration lacks it
		key := "moveblocked/" + b.from
		if _, done := r.ended(key); done {
			continue
		}
		row := r.prior[b.from]
		if err := r.event(ctx, b.from, row.ID, row.Type, "MOVE_SKIPPED", fmt.Sprintf("Warning: Unresolved resource instance address changes: "+
			"%s could not move to %s, where the stack already holds an object", b.from, b.to)); err != nil {
			return err
		}
		if err := r.end(ctx, key, "", false, detail{Kind: "moveblocked"}); err != nil {
			return err
		}
	}
	for _, row := range rf.forgotten {
		name := row.Name
		key := "forget/" + name
		token, _, err := r.begin(ctx, key)
		if err != nil {
			return err
		}
		if err := r.end(ctx, key, token, false, detail{Kind: "forget"}, state.Write{Delete: name}); err != nil {
			return err
		}
		if err := r.event(ctx, name, row.ID, row.Type, "DELETE_SKIPPED", "Removed from the stack by a removed block; the object was not destroyed"); err != nil {
			return err
		}
	}
	return nil
}
