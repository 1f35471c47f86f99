package main

import (
	"encoding/json"
	"strings"
)

// The reasons cairn's engine gives the events of a replacement (internal/engine: forward.go's
// create-first UPDATE_IN_PROGRESS, replace.go's ReplacedFirstReason). Copied, not imported:
// the runner reads cairn's output as a user would.
const (
	createFirstReason = "Requested update required the provider to create a new physical resource"
	deleteFirstReason = "Resource replacement: the old physical resource is deleted before the new one is created"
)

// cairnEvent is one line of `cairn events -o json`.
type cairnEvent struct {
	Operation, LogicalID, Type, Status, Reason string
}

// stateResource is a resource of a `pulumi stack export` state.
type stateResource struct {
	URN, Type string
}

// name is the resource's logical name as cairn's events give it (the stack: pulumi:pulumi:Stack).
func (r stateResource) name() string {
	if r.Type == "pulumi:pulumi:Stack" {
		return r.Type
	}
	if i := strings.LastIndex(r.URN, "::"); i >= 0 {
		return r.URN[i+2:]
	}
	return r.URN
}

// engineEvent is the subset of Pulumi's apitype.EngineEvent that `check` reads back: resource
// pre, outputs and failed events with their step's op, URN and type.
type engineEvent struct {
	Sequence         int        `json:"sequence"`
	ResourcePreEvent *stepEvent `json:"resourcePreEvent,omitempty"`
	ResOutputsEvent  *stepEvent `json:"resOutputsEvent,omitempty"`
	ResOpFailedEvent *stepEvent `json:"resOpFailedEvent,omitempty"`
}

type stepEvent struct {
	Metadata stepMetadata `json:"metadata"`
}

type stepMetadata struct {
	Op   string `json:"op"`
	URN  string `json:"urn"`
	Type string `json:"type"`
}

// eventLog turns what cairn did in one operation (its events, oldest first) into the engine
// event log `pulumi up --event-log` would hold, as the JSON lines `check` reads: each resource
// step cairn ran becomes a pre event when it starts and an outputs (or failed) event when it
// ends, with Pulumi's step op:
//   - CREATE → create; UPDATE → update; IMPORT → import; DELETE → delete;
//   - a create-first replacement (an UPDATE that cairn reports made a new physical resource)
//     → create-replacement, then replace, and its cleanup DELETE → delete-replaced;
//   - a delete-first replacement (a DELETE whose reason says so) → delete-replaced, then
//     replace, and the CREATE that follows → create-replacement.
//
// Resources of the final state that the operation did not touch get a same step (cairn did
// nothing to them); the stack and providers, which cairn keeps without events, are create the
// first run that has them (known says which were) and same after. Nothing else is made up:
// statuses without a Pulumi step (rollbacks, skipped deletes) are left out.
func eventLog(evs []cairnEvent, stackName string, final []stateResource, urns map[string]string, known map[string]bool) []byte {
	var out []engineEvent
	emit := func(kind, op, name, typ string) {
		md := stepMetadata{Op: op, URN: urnOf(urns, name, typ), Type: typ}
		e := engineEvent{Sequence: len(out)}
		switch kind {
		case "pre":
			e.ResourcePreEvent = &stepEvent{md}
		case "outputs":
			e.ResOutputsEvent = &stepEvent{md}
		default:
			e.ResOpFailedEvent = &stepEvent{md}
		}
		out = append(out, e)
	}
	stackOp := "same"
	if !known["pulumi:pulumi:Stack::pulumi:pulumi:Stack"] {
		stackOp = "create"
	}
	emit("pre", stackOp, "pulumi:pulumi:Stack", "pulumi:pulumi:Stack")

	touched := map[string]bool{}
	createdFirst := map[string]bool{} // a create-first replacement made its new copy
	deletedFirst := map[string]bool{} // a delete-first replacement deleted its old copy
	current := map[string]string{}    // the op of the step under way
	for i, e := range evs {
		if e.LogicalID == stackName && e.Type == "pulumi:pulumi:Stack" {
			continue // the stack's own status
		}
		verb, phase, ok := strings.Cut(e.Status, "_")
		if !ok {
			continue
		}
		name := e.LogicalID
		switch phase {
		case "IN_PROGRESS":
			var op string
			switch verb {
			case "CREATE":
				op = "create"
				if deletedFirst[name] {
					op = "create-replacement"
				}
			case "UPDATE":
				if e.Reason == createFirstReason {
					continue // the replacement's mark on a step already begun (see below)
				}
				op = "update"
				if replacesCreateFirst(evs[i+1:], name) {
					op = "create-replacement"
				}
			case "IMPORT":
				op = "import"
			case "DELETE":
				op = "delete"
				switch {
				case e.Reason == deleteFirstReason:
					op = "delete-replaced"
					deletedFirst[name] = true
				case createdFirst[name]:
					op = "delete-replaced"
				}
			default:
				continue
			}
			current[name] = op
			touched[name] = true
			emit("pre", op, name, e.Type)
		case "COMPLETE", "FAILED":
			op, ok := current[name]
			if !ok || !ends(op, verb) {
				continue // e.g. UPDATE_ROLLBACK_COMPLETE, or a step resumed after a restart
			}
			delete(current, name)
			if phase == "FAILED" {
				emit("failed", op, name, e.Type)
				continue
			}
			emit("outputs", op, name, e.Type)
			if op == "create-replacement" && !deletedFirst[name] || op == "delete-replaced" && deletedFirst[name] {
				// Pulumi's logical replace step follows the first half of the replacement.
				createdFirst[name] = op == "create-replacement"
				emit("pre", "replace", name, e.Type)
				emit("outputs", "replace", name, e.Type)
			}
		}
	}
	for _, r := range final {
		name := r.name()
		if touched[name] || r.Type == "pulumi:pulumi:Stack" {
			continue
		}
		op := "same"
		if strings.HasPrefix(r.Type, "pulumi:providers:") && !known[r.Type+"::"+name] {
			op = "create"
		}
		emit("pre", op, name, r.Type)
		emit("outputs", op, name, r.Type)
	}
	emit("outputs", stackOp, "pulumi:pulumi:Stack", "pulumi:pulumi:Stack")

	var b strings.Builder
	for _, e := range out {
		line, _ := json.Marshal(e)
		b.Write(line)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// replacesCreateFirst reports whether the update of name that starts the events after is a
// create-first replacement: cairn marks it so before the step's UPDATE_COMPLETE.
func replacesCreateFirst(after []cairnEvent, name string) bool {
	for _, e := range after {
		if e.LogicalID != name {
			continue
		}
		switch {
		case e.Status == "UPDATE_IN_PROGRESS" && e.Reason == createFirstReason:
			return true
		case e.Status == "UPDATE_COMPLETE" || e.Status == "UPDATE_FAILED":
			return false
		}
	}
	return false
}

// ends reports whether a cairn status of verb ends a step of Pulumi op.
func ends(op, verb string) bool {
	switch op {
	case "create":
		return verb == "CREATE"
	case "create-replacement": // a new copy made first (UPDATE) or after the delete (CREATE)
		return verb == "CREATE" || verb == "UPDATE"
	case "update":
		return verb == "UPDATE"
	case "import":
		return verb == "IMPORT"
	}
	return verb == "DELETE"
}

// urnOf is name's URN: from a state that held it, else built like the stack's own URN
// (urn:pulumi:<stack>::<project>::<type>::<name>) for a resource no state shows.
func urnOf(urns map[string]string, name, typ string) string {
	if u, ok := urns[name]; ok {
		return u
	}
	prefix := "urn:pulumi:unknown::unknown::"
	if s, ok := urns["pulumi:pulumi:Stack"]; ok {
		if i := strings.Index(s, "::pulumi:pulumi:Stack::"); i >= 0 {
			prefix = s[:i+2]
		}
	}
	return prefix + typ + "::" + name
}
