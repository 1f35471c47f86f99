package cfn

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/template"
)

// maxFuzzAlloc bounds what Parse and the evaluation of the result may allocate for one input
// under the default limits.
const maxFuzzAlloc = 256 << 20

// FuzzParse parses JSON and YAML templates (seeds in testdata/fuzz/FuzzParse: the hostile
// templates of TestHostileTemplates, small, and templates of testdata) with fixed options,
// then evaluates what it returns. Nothing may panic or exhaust the stack, a stack comes back
// exactly when there is no error, every diagnostic says in which file, and no input makes
// Parse allocate more than maxFuzzAlloc.
func FuzzParse(f *testing.F) {
	f.Add([]byte("Resources:\n  R: {Type: AWS::SNS::Topic}\n"))
	f.Add([]byte(`{"Resources": {"R": {"Type": "AWS::SNS::Topic", "Properties": {"P": {"Fn::Join": [",", ["a", "b"]]}}}}}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		ctx, cancel := budget.With(context.Background(), budget.Limits{Time: 20 * time.Second})
		defer cancel()
		o := opts
		o.Context, o.Validate = ctx, true
		o.Parameters = map[string]string{}
		if n, bound := yamlNodeCount(t, src), budget.YAMLNodeBound(src); n > bound {
			t.Fatalf("nodeBound = %d, but yaml.v3 makes %d nodes", bound, n)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		Detect(src)
		st, diags := Parse("fuzz.yaml", src, o)
		if st == nil && !diags.HasErrors() {
			t.Fatalf("Parse returned no stack and no error: %v", diags)
		}
		if st != nil && diags.HasErrors() {
			t.Fatalf("Parse returned a stack and errors: %v", diags.Err())
		}
		for _, d := range diags {
			if d.Range.Filename != "fuzz.yaml" {
				t.Errorf("diagnostic without its file: %v", d)
			}
		}
		if st != nil {
			for _, s := range []template.Scope{unknownScope{}, known} {
				for _, r := range st.Resources {
					r.Properties.Eval(s)
				}
				for _, out := range st.Outputs {
					out.Value.Eval(s)
				}
			}
		}
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > maxFuzzAlloc {
			t.Errorf("Parse and evaluation allocated %d MB, want at most %d MB", n>>20, maxFuzzAlloc>>20)
		}
	})
}
