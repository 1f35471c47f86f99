package server

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cairn-dev/cairn/internal/tenant"
)

// routes builds the mux. Every path also gets a method-less pattern answering 405 with Allow,
// and "/" answers 404, so that every error body is an api.Error.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	allowed := map[string][]string{}
	handle := func(method, path string, h http.Handler) {
		mux.Handle(method+" "+path, h)
		allowed[path] = append(allowed[path], method)
	}
	// api routes ask the role needFor their method; as, another.
	api := func(method, path string, h http.HandlerFunc) { handle(method, path, s.authed(needFor(method), h)) }
	as := func(role, method, path string, h http.HandlerFunc) { handle(method, path, s.authed(role, h)) }

	api("POST", "/v1/validate", s.validate)
	api("POST", "/v1/stacks/{name}/preview", s.preview)
	api("POST", "/v1/stacks/{name}/deploy", s.deploy)
	api("DELETE", "/v1/stacks/{name}", s.delete)
	api("POST", "/v1/stacks/{name}/cancel", s.cancel)
	api("POST", "/v1/stacks/{name}/import", s.importResource)
	as(tenant.Deployer, "GET", "/v1/stacks/{name}/state", s.pullState) // a state holds secrets
	api("POST", "/v1/stacks/{name}/state", s.pushState)
	api("POST", "/v1/stacks/{name}/refresh", s.refresh)
	api("GET", "/v1/stacks", s.stacks)
	api("GET", "/v1/stacks/{name}", s.stack)
	api("GET", "/v1/stacks/{name}/outputs", s.outputs)
	api("GET", "/v1/stacks/{name}/events", s.events)
	api("GET", "/v1/operations/{id}", s.operation)
	api("GET", "/v1/whoami", s.whoami)
	api("GET", "/v1/kube", s.kubeEndpoint)
	api("POST", "/v1/kube/enable", s.kubeEnable)
	s.functionRoutes(api, as)
	s.accountRoutes(as)
	s.registryRoutes(mux)
	if s.responses != nil {
		// Signed URLs: no bearer auth. Every method, so that the handler (which takes PUT and
		// POST) answers the others itself.
		mux.Handle("/v1/responses/", s.responses)
	}
	handle("GET", "/healthz", http.HandlerFunc(healthz))
	handle("GET", "/metrics", promhttp.HandlerFor(s.metrics, promhttp.HandlerOpts{}))

	for path, methods := range allowed {
		if slices.Contains(methods, "GET") {
			methods = append(methods, "HEAD")
		}
		sort.Strings(methods)
		allow := strings.Join(methods, ", ")
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			s.fail(w, r, &requestError{status: http.StatusMethodNotAllowed,
				msg: fmt.Sprintf("method %s is not allowed on %s; allowed: %s", r.Method, r.URL.Path, allow)})
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, &requestError{status: http.StatusNotFound, code: "not_found",
			msg: fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path)})
	})
	return mux
}

func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok"))
}
