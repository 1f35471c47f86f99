package server

import (
	"net/http"

	"github.com/cairn-dev/cairn/api"
)

// pullState answers GET /v1/stacks/{name}/state with the stack as a terraform state file.
func (s *Server) pullState(w http.ResponseWriter, r *http.Request) {
	opts := api.StatePullOptions{Passphrase: r.Header.Get(api.StatePassphraseHeader), ShowSecrets: r.URL.Query().Get("show-secrets") == "true"}
	b, err := s.eng.PullState(r.Context(), r.PathValue("name"), opts)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b) // the client went away; nothing to do
}

// pushState adopts the terraform state in the body as the stack's resources.
func (s *Server) pushState(w http.ResponseWriter, r *http.Request) {
	var req api.StatePushRequest
	if err := decode(w, r, &req, false); err != nil {
		s.fail(w, r, err)
		return
	}
	resp, err := s.eng.PushState(r.Context(), r.PathValue("name"), req)
	s.reply(w, r, http.StatusOK, resp, err)
}
