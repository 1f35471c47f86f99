package server

import (
	"net/http"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/tenant"
)

// whoami names the caller's tenant: cairn's kube API checks tokens with it.
func (s *Server) whoami(w http.ResponseWriter, r *http.Request) {
	c := tenant.CallerFrom(r.Context())
	writeJSON(w, http.StatusOK, api.Whoami{Tenant: c.Tenant, Admin: c.ServerAdmin(), Role: c.Role, Subject: c.Subject})
}

// kubeEndpoint says where the kube API listens and with which CA, for `cairn kube kubeconfig`.
func (s *Server) kubeEndpoint(w http.ResponseWriter, r *http.Request) {
	if s.kube == nil {
		s.fail(w, r, &requestError{status: http.StatusNotFound, code: api.CodeKubeNotServed,
			msg: "this cairn server does not serve the Kubernetes API: start it with --kube-listen ADDR"})
		return
	}
	ep, err := s.kube()
	s.reply(w, r, http.StatusOK, ep, err)
}

// kubeEnable offers resource types as CRDs. CRDs are cluster-wide: only the server's admin
// may make them.
func (s *Server) kubeEnable(w http.ResponseWriter, r *http.Request) {
	if !tenant.CallerFrom(r.Context()).ServerAdmin() {
		s.fail(w, r, &requestError{status: http.StatusForbidden, code: api.CodeForbidden,
			msg: "only the server's admin may enable types: CRDs are cluster-wide"})
		return
	}
	if s.enable == nil {
		s.fail(w, r, &requestError{status: http.StatusNotFound, code: api.CodeKubeNotServed,
			msg: "this cairn server does not serve the Kubernetes API: start it with --kube-listen ADDR"})
		return
	}
	var req api.KubeEnableRequest
	if err := decode(w, r, &req, false); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.Provider == "" || len(req.Types) == 0 {
		s.fail(w, r, &requestError{msg: "name a provider and at least one of its resource types"})
		return
	}
	resp, err := s.enable(r.Context(), req)
	s.reply(w, r, http.StatusOK, resp, err)
}
