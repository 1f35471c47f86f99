package cli

import (
	"encoding/json"
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuildVersion(t *testing.T) {
	cases := map[string]struct {
		reason string
		bi     *debug.BuildInfo
		want   string
	}{
		"NoBuildInfo": {reason: "A binary without build information is dev.", want: "cairn dev"},
		"Module": {reason: "go install module@version stamps the module version.",
			bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.0"}}, want: "cairn v1.4.0"},
		"Checkout": {reason: "go build in a checkout stamps the revision, its time and whether the tree was modified.",
			bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "cc44609aa0c5805f98b495"}, {Key: "vcs.time", Value: "2026-11-24T10:00:00Z"},
				{Key: "vcs.modified", Value: "true"}}},
			want: "cairn dev (cc44609aa0c5, 2026-11-24T10:00:00Z, modified)"},
	}
	defer func(old func() (*debug.BuildInfo, bool)) { readBuildInfo = old }(readBuildInfo)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			readBuildInfo = func() (*debug.BuildInfo, bool) { return tc.bi, tc.bi != nil }
			if got := buildVersion().String(); got != tc.want {
				t.Errorf("%s\nbuildVersion() = %q; want %q", tc.reason, got, tc.want)
			}
		})
	}
}

// TestVersionCommand: `cairn --version` and `cairn version` print the same lines; -o json
// gives an object with the language and protocol versions.
func TestVersionCommand(t *testing.T) {
	long, flag := runEnv(t, nil, "version"), runEnv(t, nil, "--version")
	if long.Code != 0 || flag.Code != 0 || long.Stdout != flag.Stdout {
		t.Fatalf("version: exit %d\n%s\n--version: exit %d\n%s", long.Code, long.Stdout, flag.Code, flag.Stdout)
	}
	got := runEnv(t, nil, "version", "-o", "json")
	var v versionInfo
	if err := json.Unmarshal([]byte(got.Stdout), &v); err != nil {
		t.Fatalf("version -o json: %v\n%s", err, got.Stdout)
	}
	want := buildVersion()
	if diff := cmp.Diff(want, v); diff != "" || v.TerraformLanguage == "" || len(v.PluginProtocols) == 0 {
		t.Errorf("version -o json: -want +got:\n%s", diff)
	}
}
