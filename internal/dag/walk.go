package dag

import "context"

// Outcome is how a node's visit ended.
type Outcome int

const (
	Done    Outcome = iota // visited without error
	Failed                 // visit returned an error
	Skipped                // not visited: a dependency failed or was skipped, or the walk stopped
)

func (o Outcome) String() string {
	return [...]string{"done", "failed", "skipped"}[o]
}

// WalkOptions tune Walk.
type WalkOptions struct {
	Parallelism int // visits in flight at most; <= 0 means 1
	// StopOnFailure stops starting new visits after the first failure (as CloudFormation stops
	// an operation to roll it back); visits in flight finish.
	StopOnFailure bool
}

type result struct {
	id  string
	err error
}

// Walk visits every node after all its dependencies were visited successfully, at most
// o.Parallelism at a time. Dependents of a failed node are Skipped and never visited, so one
// cause gives one error. A done ctx stops new visits. Only the calling goroutine touches the
// walk's bookkeeping; workers just report back.
func Walk(ctx context.Context, g *Graph, o WalkOptions, visit func(ctx context.Context, id string) error) (map[string]Outcome, map[string]error) {
	par := max(o.Parallelism, 1)
	out := map[string]Outcome{}
	errs := map[string]error{}
	pending := map[string]int{}
	dependents := map[string][]string{}
	var ready []string
	for _, id := range g.order {
		deps := g.Deps(id)
		pending[id] = len(deps)
		for _, d := range deps {
			dependents[d] = append(dependents[d], id)
		}
		if len(deps) == 0 {
			ready = append(ready, id)
		}
	}
	blocked := map[string]bool{}
	stopped := false
	release := func(id string, failed bool) {
		for _, d := range dependents[id] {
			blocked[d] = blocked[d] || failed
			if pending[d]--; pending[d] == 0 {
				ready = append(ready, d)
			}
		}
	}
	done := make(chan result)
	inflight := 0
	for len(ready) > 0 || inflight > 0 {
		if ctx.Err() != nil {
			stopped = true
		}
		if len(ready) == 0 || inflight >= par {
			r := <-done
			inflight--
			if r.err != nil {
				out[r.id], errs[r.id] = Failed, r.err
				stopped = stopped || o.StopOnFailure
			} else {
				out[r.id] = Done
			}
			release(r.id, r.err != nil)
			continue
		}
		id := ready[0]
		ready = ready[1:]
		if blocked[id] || stopped {
			out[id] = Skipped
			release(id, true)
			continue
		}
		inflight++
		go func() { done <- result{id, visit(ctx, id)} }()
	}
	return out, errs
}
