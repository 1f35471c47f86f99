package server

import (
	"context"
	"net/http"
	"strings"
	"unicode"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/tenant"
)

// Handlers decode, call the engine, encode. Errors go through s.fail.

func (s *Server) validate(w http.ResponseWriter, r *http.Request) {
	var req api.ValidateRequest
	if err := decode(w, r, &req, false); err != nil {
		s.fail(w, r, err)
		return
	}
	resp, err := s.eng.Validate(r.Context(), req)
	s.reply(w, r, http.StatusOK, resp, err)
}

func (s *Server) preview(w http.ResponseWriter, r *http.Request) {
	var req api.DeployRequest
	if err := decode(w, r, &req, false); err != nil {
		s.fail(w, r, err)
		return
	}
	resp, err := s.eng.Preview(r.Context(), r.PathValue("name"), req)
	s.reply(w, r, http.StatusOK, resp, err)
}

func (s *Server) deploy(w http.ResponseWriter, r *http.Request) {
	var req api.DeployRequest
	if err := decode(w, r, &req, false); err != nil {
		s.fail(w, r, err)
		return
	}
	op, err := s.eng.Deploy(r.Context(), r.PathValue("name"), req)
	s.reply(w, r, http.StatusAccepted, op, err)
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request) {
	var req api.DeleteRequest
	if err := decode(w, r, &req, true); err != nil {
		s.fail(w, r, err)
		return
	}
	op, err := s.eng.Delete(r.Context(), r.PathValue("name"), req)
	s.reply(w, r, http.StatusAccepted, op, err)
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	var req api.CancelRequest
	if err := decode(w, r, &req, true); err != nil {
		s.fail(w, r, err)
		return
	}
	if !req.Force {
		op, err := s.eng.Cancel(r.Context(), r.PathValue("name"))
		s.reply(w, r, http.StatusAccepted, op, err)
		return
	}
	if !can(r.Context(), tenant.Admin, r.PathValue("name")) {
		s.fail(w, r, &requestError{status: http.StatusForbidden, code: api.CodeForbidden,
			msg: "only an admin may force a cancel: it ends the operation without rollback"})
		return
	}
	by, err := forcedBy(r.Context(), req.By, s.auth.Multi())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	op, err := s.eng.ForceUnlock(r.Context(), r.PathValue("name"), by)
	s.reply(w, r, http.StatusOK, op, err)
}

func (s *Server) importResource(w http.ResponseWriter, r *http.Request) {
	var req api.ImportRequest
	if err := decode(w, r, &req, false); err != nil {
		s.fail(w, r, err)
		return
	}
	res, err := s.eng.Import(r.Context(), r.PathValue("name"), req)
	s.reply(w, r, http.StatusOK, res, err)
}

func (s *Server) refresh(w http.ResponseWriter, r *http.Request) {
	var req api.RefreshRequest
	if err := decode(w, r, &req, true); err != nil {
		s.fail(w, r, err)
		return
	}
	resp, err := s.eng.Refresh(r.Context(), r.PathValue("name"), req)
	s.reply(w, r, http.StatusOK, resp, err)
}

// StackList is the body of GET /v1/stacks.
type StackList struct {
	Stacks []api.Stack `json:"stacks"`
}

// OutputList is the body of GET /v1/stacks/{name}/outputs.
type OutputList struct {
	Outputs []api.Output `json:"outputs"`
}

// EventList is the body of GET /v1/stacks/{name}/events.
type EventList struct {
	Events []api.Event `json:"events"`
}

func (s *Server) stacks(w http.ResponseWriter, r *http.Request) {
	list, err := s.eng.Stacks(r.Context())
	s.reply(w, r, http.StatusOK, StackList{Stacks: nonNil(list)}, err)
}

func (s *Server) stack(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r, "attributes")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	read := s.eng.Stack
	if q.noAttributes {
		read = s.eng.StackBrief
	}
	st, err := read(r.Context(), r.PathValue("name"))
	s.reply(w, r, http.StatusOK, st, err)
}

// outputs answers a stack's outputs, secrets masked unless ?show-secrets=true.
func (s *Server) outputs(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r, "show-secrets")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if q.showSecrets && !can(r.Context(), tenant.Deployer, r.PathValue("name")) {
		s.fail(w, r, &requestError{status: http.StatusForbidden, code: api.CodeForbidden,
			msg: "a viewer may not read secrets: show-secrets needs the role deployer"})
		return
	}
	outs, err := s.eng.Outputs(r.Context(), r.PathValue("name"), q.showSecrets)
	s.reply(w, r, http.StatusOK, OutputList{Outputs: nonNil(outs)}, err)
}

func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r, "after", "wait", "latest")
	if err == nil && q.latest && (q.after > 0 || q.wait > 0) {
		err = &requestError{msg: "query parameter latest=true takes neither after nor wait"}
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if q.latest { // where to start following: one event, however long the stack's history
		ev, ok, err := s.eng.LastEvent(r.Context(), r.PathValue("name"))
		evs := []api.Event{}
		if ok {
			evs = append(evs, ev)
		}
		s.reply(w, r, http.StatusOK, EventList{Events: evs}, err)
		return
	}
	evs, err := s.pollEvents(r.Context(), r.PathValue("name"), q.after, q.wait)
	s.reply(w, r, http.StatusOK, EventList{Events: nonNil(evs)}, err)
}

func (s *Server) operation(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r, "wait")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	op, err := s.pollOperation(r.Context(), r.PathValue("id"), q.wait)
	s.reply(w, r, http.StatusOK, op, err)
}

// nonNil makes empty lists encode as [] rather than null.
func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}

// forcedBy is who forced a cancel, as the stack's event names them: the client's By, checked
// (it goes into events as it is), and the tenant when the server has several.
func forcedBy(ctx context.Context, by string, tenants bool) (string, error) {
	if len(by) > 200 || strings.ContainsFunc(by, unicode.IsControl) {
		return "", &requestError{msg: "by must be at most 200 characters, without control characters"}
	}
	if by == "" {
		by = "an API client"
	}
	if tenants {
		by += " (tenant " + tenant.From(ctx) + ")"
	}
	return by, nil
}
