package pulumirpc

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"

	"github.com/cairn-dev/cairn/internal/provider"
)

func TestReplaceOnChanges(t *testing.T) {
	update := &pulumirpc.PropertyDiff{Kind: pulumirpc.PropertyDiff_UPDATE}
	cases := map[string]struct {
		reason   string
		resp     provider.DiffResponse
		detailed map[string]*pulumirpc.PropertyDiff
		paths    []string
		want     []string
	}{
		"TopLevelKey": {reason: "A changed key under a listed path is replaced.",
			resp: provider.DiffResponse{Changed: true, ChangedKeys: []string{"value", "other"}}, paths: []string{"value"}, want: []string{"value"}},
		"DetailedUnderPath": {reason: "A detailed path inside a listed path is replaced.",
			resp: provider.DiffResponse{Changed: true, ChangedKeys: []string{"tags"}}, detailed: map[string]*pulumirpc.PropertyDiff{`tags["a.b"]`: update},
			paths: []string{`tags["a.b"]`}, want: []string{`tags["a.b"]`}},
		"Wildcard": {reason: "* matches any one step.",
			resp: provider.DiffResponse{Changed: true, ChangedKeys: []string{"list"}}, detailed: map[string]*pulumirpc.PropertyDiff{"list[3].name": update},
			paths: []string{"list[*].name"}, want: []string{"list[3].name"}},
		"Elsewhere": {reason: "A change outside every listed path stays an update.",
			resp: provider.DiffResponse{Changed: true, ChangedKeys: []string{"other"}}, paths: []string{"value", "*.x"}},
		"NoChange": {reason: "No change, no replacement.", resp: provider.DiffResponse{}, paths: []string{"*"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := replaceOnChanges(tc.resp, tc.detailed, tc.paths)
			if diff := cmp.Diff(tc.want, got.ReplacePaths); diff != "" {
				t.Errorf("%s\nReplacePaths -want +got:\n%s", tc.reason, diff)
			}
			if got.Replace != (len(tc.want) > 0) {
				t.Errorf("%s\nReplace = %v", tc.reason, got.Replace)
			}
		})
	}
}
