package server

import (
	"encoding/json"
	"net/http"
	"runtime"

	apimachineryversion "k8s.io/apimachinery/pkg/version"
)

// withVersion answers GET /version with Version. The library reports the version stamped into
// k8s.io/component-base at link time, which a plain `go build` leaves as
// "v0.0.0-master+$Format:%H$": kubectl then prints that and api-resources fails to parse it.
func withVersion(next http.Handler, info *apimachineryversion.Info) http.Handler {
	v := *info
	v.GitVersion = "v" + Version
	v.GitCommit, v.GitTreeState, v.BuildDate = "", "", ""
	v.GoVersion, v.Compiler, v.Platform = runtime.Version(), runtime.Compiler, runtime.GOOS+"/"+runtime.GOARCH
	body, _ := json.MarshalIndent(v, "", "  ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/version" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
			return
		}
		next.ServeHTTP(w, r)
	})
}
