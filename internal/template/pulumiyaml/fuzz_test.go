package pulumiyaml

import (
	"context"
	"testing"
)

// FuzzParse feeds programs and stack files to Parse and evaluates their outputs: never a
// panic, whatever the input.
func FuzzParse(f *testing.F) {
	f.Add("outputs:\n  o: {fn::length: ${c}}\n", "config:\n  p:c: '[1]'\n")
	f.Add("configuration:\n  c: {type: List<Number>}\noutputs:\n  o: {fn::assetArchive: {a: {fn::fileArchive: d}}}\n", "config:\n  p:c: '[1, \"x\"]'\n")
	f.Add("pulumi:\n  requiredVersion: ${c}\noutputs:\n  o: {fn::fromBase64: ${c}}\n", "encryptionsalt: v1:AA==:v1:AA==:AA==\nconfig:\n  p:c:\n    secure: v1:x:y\n")
	f.Add("outputs:\n  o: {fn::readFile: ../x}\n  k: {\"$${a}\": {fn::singleOrNone: [1, 2]}}\n", "config: {}\n")
	f.Add("outputs:\n  o: .nan\n  s: {fn::select: [.inf, [1]]}\n", "config:\n  p:x: .nan\n  p:y: NaN\n")
	f.Fuzz(func(t *testing.T, program, stack string) {
		fs := map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\n" + program, "Pulumi.dev.yaml": stack,
			"d/a.txt": "a", "x.tar": "not a tar"}
		st, ds := Parse(WithRootDirectory(context.Background(), "/p"), fs, "dev", nil)
		if ds.HasErrors() || st == nil {
			return
		}
		for _, o := range st.Outputs {
			o.Value.Eval(scope{})
		}
	})
}
